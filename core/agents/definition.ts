/**
 * Agent definitions: the one zod schema of an agent file (`agents/<name>.yaml|.yml|.json`), the
 * source of its types and of `docs/agent.schema.json` (scripts/agent-schema.ts). Pure.
 *
 * Strict everywhere: an unknown field is an error, never ignored (a typo in `limits` must not
 * silently fall back to a default). Settings the worker also has a default for (model, limits,
 * multi_action) have no default here: they stay absent, and `resolveTurnSettings`
 * (./settings.ts) layers worker default < agent < turn override.
 *
 * One word for the model's decisions: a **round** (`limits.max_rounds`), as in the glossary; the
 * environment's AI_REACT_MAX_ITERATIONS and the CLI's --max-iterations are older names for it.
 *
 * Workflows import only types from here (`import type`), values from ./ref.
 */
import { z } from 'zod';
import { ROLE_PURPOSES, type RolePurpose } from './ref';
import { AgentNameSchema, BackgroundSchema, SecretNameSchema, SubagentEntrySchema } from './subagent-schema';
import { toolPatternIssue } from './tool-filter';
import { McpSchema } from '../mcp/config';
import { AgentScheduleSchema } from '../schedules/agent-schedules';

/** Rules an issue may carry in `params.rule` (the loader reports them as the error's rule). */
export type SchemaRule = 'bad_glob' | 'conflict' | 'duplicate';

/** Most characters of an agent's instructions (inline or from its file). */
export const MAX_INSTRUCTIONS_CHARS = 100_000;

const rule = (r: SchemaRule) => ({ params: { rule: r } });

export { AgentNameSchema, RemoteSubagentSchema, SubagentEntrySchema } from './subagent-schema';
export type { RemoteSubagent, SubagentEntry } from './subagent-schema';

const ProviderIdSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a provider id is a lowercase slug (e.g. anthropic, scripted)');

/** A relative or absolute path; relative paths are relative to the agent file's folder. */
const PathSchema = z.string().min(1).max(1000);

/** An integer in [min, max] (the loader reports a value outside as `bad_limit`). */
const limit = (min: number, max: number) => {
  const error = `must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

const ModelFields = {
  provider: ProviderIdSchema.describe('Model provider id (scripted, anthropic, openai).'),
  model: z.string().min(1).max(200).optional().describe("The provider's model id; absent: the provider's default."),
  max_tokens: limit(1, 64_000).optional().describe('Most output tokens per call.'),
  temperature: z.number().min(0).max(1).optional(),
  protocol: z
    .enum(['channels', 'native'])
    .optional()
    .describe("Decision protocol: the runtime's text channels (default) or the provider's native tool calling."),
  answer_synthesis: z
    .boolean()
    .optional()
    .describe('Native protocol only: tools first, then one streamed answer-only call.'),
  script: z.string().min(1).max(200).optional().describe('Scripted provider only: the name of a built-in script.'),
  thinking: z
    .strictObject({ budget_tokens: limit(1_024, 64_000).describe('Output tokens the model may think with.') })
    .optional()
    .describe('Extended thinking (anthropic): its budget of output tokens.'),
};

/** A model of a fallback chain: the main model's fields but the protocol (the turn keeps its own). */
const FallbackModelSchema = z.strictObject({
  provider: ModelFields.provider,
  model: ModelFields.model,
  max_tokens: ModelFields.max_tokens,
  temperature: ModelFields.temperature,
  script: ModelFields.script,
  thinking: ModelFields.thinking,
});

const ChainFields = {
  ...ModelFields,
  fallbacks: z
    .array(FallbackModelSchema)
    .max(4)
    .optional()
    .describe(
      'Models to move on to, in order, when this one fails before answering: overloaded, 5xx on a retry, auth, a long rate limit, or a context-length refusal (to a larger window).',
    ),
};

/** The agent's main model. */
export const ModelSchema = z.strictObject(ChainFields);
export type AgentModel = z.infer<typeof ModelSchema>;

/**
 * A role's model: fields it leaves out come from the main model — except `model` and `script`
 * when the role names another provider.
 */
export const RoleModelSchema = ModelSchema.partial();
export type RoleModel = z.infer<typeof RoleModelSchema>;

export const RolesSchema = z
  .strictObject(
    Object.fromEntries(ROLE_PURPOSES.map((p) => [p, RoleModelSchema.optional()])) as Record<
      RolePurpose,
      z.ZodOptional<typeof RoleModelSchema>
    >,
  )
  .describe('A model per purpose; each defaults to the main model.');

const ToolPatternSchema = z.string().superRefine((p, ctx) => {
  const issue = toolPatternIssue(p);
  if (issue) ctx.addIssue({ code: 'custom', message: issue, ...rule('bad_glob') });
});

const uniqueList = <T extends z.ZodType<string>>(item: T, max: number) =>
  z
    .array(item)
    .max(max)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((v, i) => {
        if (seen.has(v))
          ctx.addIssue({
            code: 'custom',
            message: `${JSON.stringify(v)} is listed twice`,
            path: [i],
            ...rule('duplicate'),
          });
        seen.add(v);
      });
    });

const TOOLS_SHAPE =
  'expected { allow: [tool ids], modules: [paths] } or a list of tool ids (shorthand for tools.allow)';

const ToolsObjectSchema = z.strictObject(
  {
    allow: uniqueList(ToolPatternSchema, 200)
      .optional()
      .describe(
        "Tool ids the agent may use; * matches any characters (react.*, web_*, mcp.github.*), a leading ! removes. Default: every tool of the worker and of this agent's modules.",
      ),
    modules: uniqueList(PathSchema, 20)
      .optional()
      .describe('Tool modules loaded at worker start: a path relative to this file, or a package name.'),
    queue: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.:\-/]{0,199}$/, 'a task queue name: letters, digits and _ . : - / (at most 200)')
      .optional()
      .describe(
        "Task queue this agent's tool calls run on (e.g. a tenant class's tools workers: dreact worker --roles tools with DREACT_TASK_QUEUE_TOOLS set to it). Default: the tools role's queue. Exec, local and delegate calls keep theirs.",
      ),
  },
  { error: (issue) => (issue.code === 'invalid_type' ? TOOLS_SHAPE : undefined) },
);

/** `tools: [react.read, react.write]` — the shape most agent formats use — is `tools: { allow: [...] }`. */
export const ToolsSchema = z.preprocess((v) => (Array.isArray(v) ? { allow: v } : v), ToolsObjectSchema);

export const LimitsSchema = z.strictObject({
  max_rounds: limit(1, 100).optional().describe('Most rounds (model decisions) per turn.'),
  context_max_tokens: limit(1_000, 2_000_000).optional().describe("Context budget of one round's request, tokens."),
  cache_ttl_seconds: limit(1, 86_400).optional().describe("The provider's prompt-cache TTL, seconds."),
  spend_usd_per_turn: z
    .number()
    .positive()
    .max(10_000)
    .optional()
    .describe('Most a turn may spend on model calls, USD (reserved before each call; docs/governance.md).'),
});

/** Human approval of tool calls (docs/governance.md). */
export const ApprovalSchema = z.strictObject({
  tools: uniqueList(ToolPatternSchema, 200)
    .optional()
    .describe('Tool patterns whose calls wait for a person to approve, deny or edit them (* as in tools.allow).'),
  timeout_seconds: limit(1, 30 * 86_400)
    .optional()
    .describe('How long a call waits for a decision (default 86400: a day).'),
  on_timeout: z
    .enum(['deny', 'fail'])
    .optional()
    .describe('When no one decided in time: deny the call (default) or fail the turn.'),
});

export const ExecSchema = z.strictObject({
  backend: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a backend name is a lowercase slug (local, docker, fargate)')
    .optional()
    .describe('Sandbox backend: local | docker | fargate.'),
  image: z.string().min(1).max(500).optional().describe('Container image of the sandbox.'),
  limits: z
    .strictObject({
      timeout_seconds: limit(1, 3_600).optional(),
      memory_mb: limit(64, 65_536).optional(),
      cpus: z.number().min(0.1).max(64).optional(),
      max_processes: limit(1, 4_096).optional(),
      max_file_mb: limit(1, 10_240).optional(),
      max_output_files: limit(1, 10_000).optional(),
      max_output_mb: limit(1, 10_240).optional(),
      max_log_kb: limit(1, 102_400).optional(),
    })
    .optional(),
});

const SLUG = '[a-z0-9][a-z0-9_.-]{0,63}';
const TenantIdSchema = z
  .string()
  .regex(new RegExp(`^${SLUG}$`), "a tenant id (lower-case letters, digits, '_', '.', '-')");
const ProjectRefSchema = z
  .string()
  .regex(new RegExp(`^${SLUG}/${SLUG}$`), 'a project as <tenant>/<project> (e.g. acme/web)');

/** Which tenants and projects see and may run the agent (core/agents/visibility.ts). */
export const VisibilitySchema = z
  .strictObject({
    tenants: uniqueList(TenantIdSchema, 500)
      .optional()
      .describe('Tenants that see and may run the agent, in all their projects.'),
    projects: uniqueList(ProjectRefSchema, 500)
      .optional()
      .describe('Projects that see and may run the agent, as <tenant>/<project>.'),
  })
  .superRefine((v, ctx) => {
    if (!v.tenants?.length && !v.projects?.length)
      ctx.addIssue({
        code: 'custom',
        message: 'visibility names no tenant and no project (leave visibility out for every tenant)',
      });
  });
export type AgentVisibility = z.infer<typeof VisibilitySchema>;

export const SecretSourceSchema = z.union([
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name') }),
  z.strictObject({ file: PathSchema }),
]);
export type SecretSource = z.infer<typeof SecretSourceSchema>;

export const AgentDefinitionSchema = z
  .strictObject({
    $schema: z.string().optional().describe('The JSON Schema this file follows (for editors); ignored.'),
    name: AgentNameSchema.describe('The agent name; equal to the file name without extension.'),
    description: z.string().max(1_000).optional(),
    instructions: z
      .string()
      .max(MAX_INSTRUCTIONS_CHARS)
      .optional()
      .describe('Persona and product instructions, placed in the cached system prompt.'),
    instructions_file: PathSchema.optional().describe('The instructions in a file (relative to this file).'),
    model: ModelSchema.optional().describe("The main model; absent: the worker's default."),
    roles: RolesSchema.optional(),
    tools: ToolsSchema.optional(),
    skills: PathSchema.optional().describe('Skills folder (one SKILL.md per sub-folder).'),
    knowledge: PathSchema.optional().describe('Knowledge folder (react.search_knowledge).'),
    limits: LimitsSchema.optional(),
    approval: ApprovalSchema.optional(),
    multi_action: z.enum(['off', 'safe_fanout']).optional().describe('Up to 2 actions per round when safe_fanout.'),
    exec: ExecSchema.optional(),
    subagents: z
      .array(SubagentEntrySchema)
      .max(50)
      .optional()
      .describe(
        'Agents this agent may delegate to: a defined agent by name, or a remote A2A agent as { a2a: <agent card URL>, name, description?, auth? }.',
      ),
    max_depth: limit(1, 5).optional().describe('Most levels of nested delegation below this agent (default 1).'),
    background: BackgroundSchema.optional().describe(
      'Background subagents: whether agent.delegate runs in the background by default, and how a finished task is delivered.',
    ),
    visibility: VisibilitySchema.optional().describe(
      'Which tenants and projects see and may run this agent (any listed tenant, or listed <tenant>/<project>). Absent: every tenant.',
    ),
    mcp: McpSchema.optional().describe(
      'MCP servers whose tools the agent may use (mcp.<server>.<tool>, allowed like any tool: mcp.github.*).',
    ),
    secrets: z
      .record(SecretNameSchema, SecretSourceSchema)
      .optional()
      .describe('Secrets tools may read by name: { env: VAR } or { file: path }; never written to the timeline.'),
    schedules: z
      .array(AgentScheduleSchema)
      .max(50)
      .optional()
      .describe(
        'Turns of this agent a Temporal Schedule starts (cron or every), reconciled at worker start (docs/schedules.md).',
      ),
  })
  .superRefine((d, ctx) => {
    const subagents = (d.subagents ?? []).map((e) => (typeof e === 'string' ? e : e.name));
    subagents.forEach((n, i) => {
      if (subagents.indexOf(n) !== i)
        ctx.addIssue({
          code: 'custom',
          path: ['subagents', i],
          message: `subagent ${JSON.stringify(n)} is listed twice`,
          ...rule('duplicate'),
        });
    });
    (d.subagents ?? []).forEach((e, i) => {
      if (typeof e !== 'string' && e.auth && !(e.auth.secret in (d.secrets ?? {})))
        ctx.addIssue({
          code: 'custom',
          path: ['subagents', i, 'auth', 'secret'],
          message: `secret ${JSON.stringify(e.auth.secret)} is not declared in this agent's secrets`,
        });
    });
    const names = (d.schedules ?? []).map((s) => s.name);
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i)
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', i, 'name'],
          message: `schedule "${n}" is declared twice`,
          ...rule('duplicate'),
        });
    });
    if (d.instructions !== undefined && d.instructions_file !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['instructions_file'],
        message: 'set instructions or instructions_file, not both',
        ...rule('conflict'),
      });
  });

/** An agent file as written (after parsing). */
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;
export type AgentDefinitionInput = z.input<typeof AgentDefinitionSchema>;
export type AgentTools = z.infer<typeof ToolsSchema>;
export type AgentLimits = z.infer<typeof LimitsSchema>;
export type AgentExec = z.infer<typeof ExecSchema>;

/**
 * The definition a turn runs with: the instructions text inline (from `instructions_file` when
 * the file names one), `$schema` dropped. Its canonical JSON is what the agent's hash covers.
 */
export type ResolvedAgentDefinition = Omit<AgentDefinition, '$schema' | 'instructions_file' | 'instructions'> & {
  instructions: string;
};

/** The JSON Schema of agent files (input side: what a user writes). */
export function agentJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(AgentDefinitionSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  // The shorthand list is parsed by a preprocess, which JSON Schema cannot show: say it here.
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const tools = z.toJSONSchema(ToolsObjectSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _s, ...toolsObject } = tools;
  properties.tools = {
    anyOf: [
      toolsObject,
      {
        ...((toolsObject.properties as Record<string, unknown>)['allow'] as object),
        description: 'Shorthand for tools.allow.',
      },
    ],
  };
  return {
    $schema: schema.$schema,
    title: 'durable-react agent definition',
    description: 'An agent file: agents/<name>.yaml, .yml or .json (docs/agents.md).',
    ...schema,
  };
}
