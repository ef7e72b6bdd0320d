/**
 * The agent file's parts about other agents: its name's schema, the subagents it may delegate to
 * (a defined agent's name, or a remote A2A agent: core/agents/remote-subagents.ts) and its
 * background-delegation settings (core/agents/background.ts). Pure; part of the one agent-file
 * schema (./definition.ts).
 */
import { z } from 'zod';
import { AGENT_NAME_RE } from './ref';
import { ON_RESULT_MODES } from './background';

export const AgentNameSchema = z
  .string()
  .regex(AGENT_NAME_RE, 'an agent name is a lowercase slug: a-z first, then a-z 0-9 _ - (at most 64 characters)');

export const SecretNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'a secret name is an identifier');

const HeaderNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, 'an HTTP header name (letters, digits and -)');

/**
 * A remote A2A agent as a subagent (core/agents/remote-subagents.ts): agent.delegate to its name
 * runs the task on it through `@a2a-js/sdk`'s client (activities/agents/a2a-delegate.ts).
 */
export const RemoteSubagentSchema = z.strictObject({
  a2a: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL of the remote agent card' })
    .max(2_000)
    .describe(
      "The remote agent's A2A agent card URL (e.g. https://host/v1/a2a/researcher/.well-known/agent-card.json).",
    ),
  name: AgentNameSchema.describe('The name agent.delegate calls it by (a lowercase slug, unique among subagents).'),
  description: z.string().max(1_000).optional().describe('What it does, shown to the model beside its name.'),
  auth: z
    .strictObject({
      secret: SecretNameSchema.describe("A name of this agent file's `secrets`: the credential, never written here."),
      header: HeaderNameSchema.optional().describe('The header it is sent in (default Authorization).'),
      scheme: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9-]{0,31}$/)
        .optional()
        .describe('Prefix of the value (default Bearer for Authorization, none for another header).'),
    })
    .optional()
    .describe('How calls to the remote agent authenticate: a secret of this agent, sent as a header.'),
});
export type RemoteSubagent = z.infer<typeof RemoteSubagentSchema>;

/** A subagent: a defined agent's name, or a remote A2A agent. */
export const SubagentEntrySchema = z.union([AgentNameSchema, RemoteSubagentSchema]);
export type SubagentEntry = z.infer<typeof SubagentEntrySchema>;

/** Background subagents (core/agents/background.ts). */
export const BackgroundSchema = z.strictObject({
  delegate: z
    .boolean()
    .optional()
    .describe('true: agent.delegate runs in the background unless a call says wait: true (default false).'),
  on_result: z
    .enum(ON_RESULT_MODES)
    .optional()
    .describe(
      "followup (default): a finished task's answer arrives as a followup (a new turn when none runs); record: kept on the task (agent.tasks).",
    ),
});
