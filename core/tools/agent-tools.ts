/**
 * Declaration of `agent.delegate`: run another defined agent on a task, as a child workflow of the
 * turn (core/agents/subagents.ts, workflows/turn/subagent-step.ts). Its plan says `child`: the workflow
 * starts the child's turn, then the tool activity appends the child's answer (and its files, by
 * reference) as the call's result. Offered only to agents that list `subagents`, above their depth cap.
 */
import { z } from 'zod';
import { declareTool } from './registry';
import { DELEGATE_TOOL_ID } from '../agents/subagents';
import { AGENT_NAME_RE } from '../agents/ref';

export const AgentDelegateParamsSchema = z.strictObject({
  agent: z.string().regex(AGENT_NAME_RE, 'an agent name (a lowercase slug)').describe('The subagent to run.'),
  task: z
    .string()
    .min(1)
    .max(16_000)
    .describe('The whole task for the subagent: it sees only this, not this conversation.'),
  wait: z
    .boolean()
    .optional()
    .describe(
      "false: run it in the background — this call returns a receipt (task id) at once and the answer arrives later as a followup. Default: the agent's `background.delegate` setting, else true (wait for the answer).",
    ),
});
export type AgentDelegateParams = z.output<typeof AgentDelegateParamsSchema>;

export const agentDelegate = declareTool({
  id: DELEGATE_TOOL_ID,
  description:
    'Delegate a self-contained task to one of your subagents. It works in a conversation of its own with its own ' +
    "tools and budget and returns its answer (and the files it wrote, by path) as this call's result; with " +
    'wait: false it runs in the background and its answer arrives later in this conversation.',
  params: AgentDelegateParamsSchema,
  strategy: 'unknown',
  bundleSafe: false,
  // The activity that records the child's answer: reads Postgres only.
  timeoutMs: 30_000,
  retry: { maximumAttempts: 5, initialInterval: 500 },
  child: true,
  summarize: (p: AgentDelegateParams) => `subagent ${p.agent}: ${p.task.replace(/\s+/g, ' ').slice(0, 100)}`,
});
