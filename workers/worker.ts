/**
 * Builds the durable-react worker: workflows bundle + turn activities bound to Postgres,
 * the model providers and the tools.
 */
import { agentExecProblems } from '../activities/exec/exec-tool';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { hostname } from 'node:os';
import {
  configuredTaskQueues,
  parseWorkerRoles,
  queuesFromBase,
  type RoleQueues,
  type WorkerRole,
} from '../core/turn/roles';
import { timeoutSettings, type TimeoutSettings } from '../core/turn/timeouts';
import { describeRoleQueue } from '../activities/temporal/pollers';
import { DreactWorker } from './role-workers';
import { STICKY_SCHEDULE_TO_START_MS } from './tuning';
import { createWorkerActivities } from '../activities/turn-activities';
import { cachedWorkflowBundle } from './bundle';
import { resolveContextMaxTokens } from '../core/compaction/estimate';
import type { ActivityDeps } from '../activities/deps';
import type { Db } from '../store/db';
import { builtinTools } from '../activities/tools';
import type { ToolImpl } from '../activities/tools/types';
import { createToolRegistry } from '../core/tools';
import type { AnyToolDeclaration } from '../core/tools/registry';
import { parseMultiActionMode, type MultiActionMode } from '../core/decision/multi-action';
import { defaultProviderResolver } from '../activities/model/registry';
import type { ModelConfig } from '../core/model/config';
import { DEFAULT_MAX_ROUNDS } from '../core/turn/contracts';
import type { FargateBackend } from '../activities/exec/fargate/backend';
import { setupTelemetry, type Telemetry } from './telemetry';
import { deploymentFromEnv } from './deployment';
import { createViewCache } from '../store/view-cache';
import { streamWriteGapMs } from '../store/stream-writer';
import { embeddingProviderFromEnv, type EmbeddingProvider } from '../activities/memory/embeddings';
import { libraryConfigFromEnv, openLibrary, type Library } from '../activities/library/library';
import { reactReadWithSkills, reactSearchKnowledge } from '../core/tools/library-tools';
import { skillCatalogue } from '../core/library/skills';
import { projectFile } from '../store/project-files';
import { journalInterceptor, type ActivityJournal } from './activity-journal';
import { badDataInterceptor } from '../activities/bad-data';
import { loadAgents } from '../activities/agents/loader';
import { createAgentViews } from '../activities/agents/view';
import { openAgentLibraries } from '../activities/agents/agent-library';
import { workerDefaultsOf } from '../activities/agents/turn-agent';
import { swappableAgentViews, toolBox } from '../activities/ports';
import { createActivityDeps } from '../activities/create-deps';
import type { DefinedTool } from '../activities/agents/define-tool';
import { createEvalActivities } from '../activities/evals';
import { modelGateway } from '../activities/model/gateway';
import { McpConnections, mcpServersOf, type McpStartOptions } from '../activities/mcp/connections';
import { mcpServersFor, withMcpTools } from '../activities/mcp/agents';
import { lateMcpToolActivity } from '../activities/mcp/late-activities';
import { createDelegateTool, makeDelegationActivities } from '../activities/agents/delegate';
import { makeA2aDelegateActivity } from '../activities/agents/a2a-delegate';
import { makeRemoteTaskActivities } from '../activities/agents/a2a-background';
import { A2A_DELEGATE_ACTIVITY } from '../core/agents/remote-subagents';
import { createTaskTools, makeBackgroundTaskActivities } from '../activities/agents/background-tasks';
import { makeDetachActivities } from '../activities/agents/detach';
import { makeScheduleRunActivities } from '../activities/schedules/run-activities';
import { makeDeliveryActivities } from '../activities/schedules/deliver';
import { reconcileAgentSchedules } from './schedule-reconcile';

// The provider registry (activities/model/registry.ts) resolves a turn's model config; kept
// importable from here for existing callers.
export { defaultProviderResolver, envDefaultModel } from '../activities/model/registry';

/** DREACT_VIEW_CACHE_MB: the worker's view cache size (default 256 MB; 0 turns it off). */
export function viewCacheBytes(raw = process.env.DREACT_VIEW_CACHE_MB): number {
  if (raw === undefined || raw.trim() === '') return 256 * 1024 * 1024;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 65_536)
    throw new Error(`DREACT_VIEW_CACHE_MB must be a number of megabytes from 0 to 65536, got ${JSON.stringify(raw)}`);
  return Math.round(n * 1024 * 1024);
}

/**
 * DREACT_LOCAL_TOOLS: `on` (default) runs the short Postgres-only tools (react.read / write / plan /
 * hide) as local activities, one server round trip fewer per round; `off` schedules them as
 * regular activities (each call its own task, visible as an activity in Temporal UI).
 */
export function envLocalTools(env = process.env.DREACT_LOCAL_TOOLS): boolean {
  if (env === undefined || env.trim() === '' || env === 'on') return true;
  if (env === 'off') return false;
  throw new Error(`DREACT_LOCAL_TOOLS must be "on" or "off", got ${JSON.stringify(env)}`);
}

export function envMaxIterations(env = process.env.AI_REACT_MAX_ITERATIONS): number {
  if (env === undefined || env === '') return DEFAULT_MAX_ROUNDS;
  const n = Number(env);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw new Error(`AI_REACT_MAX_ITERATIONS must be an integer from 1 to 100, got ${JSON.stringify(env)}`);
  return n;
}

export interface CreateWorkerOptions {
  connection: NativeConnection;
  db: Db;
  /**
   * The workflows role's queue, and the base of the others (`<taskQueue>-models`, `-tools`,
   * `-exec`). Absent: `queues`, else the environment (core/turn/roles.ts configuredTaskQueues).
   */
  taskQueue?: string;
  /** Each role's queue by name (over `taskQueue`'s or the environment's). */
  queues?: Partial<RoleQueues>;
  /**
   * The roles this process runs, one SDK Worker each (else DREACT_WORKER_ROLES, else all four):
   * e.g. `['models', 'tools']` next to a `['workflows']` process elsewhere (docs/worker-roles.md).
   */
  roles?: readonly WorkerRole[];
  /** Heartbeat and activity timeouts (else DREACT_TIMEOUT_PROFILE and its overrides, core/turn/timeouts.ts). */
  timeouts?: TimeoutSettings;
  /** Options of one role's SDK Worker over `worker` (slots, tuner: workers/tuning.ts roleTuningFromEnv). */
  roleWorker?: Partial<Record<WorkerRole, Partial<WorkerOptions>>>;
  namespace?: string;
  provider?: ActivityDeps['provider'];
  /**
   * The model of a turn that names none (default provider resolver only): else Anthropic when
   * ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN is set, else every such turn fails with "no model configured".
   */
  defaultModel?: ModelConfig;
  /** Extra tools: a declaration (what the model sees) and its implementation. */
  extraTools?: Array<{ declaration: AnyToolDeclaration; impl: ToolImpl }>;
  /** A team's own tools (`defineTool` results), offered to every agent whose allow-list matches them. */
  tools?: readonly DefinedTool[];
  /**
   * Agent definitions (docs/agents.md): the files in `dir` (else DREACT_AGENTS_DIR, else ./agents)
   * and `files` by path, and `definitions` in code (objects shaped like a file, e.g.
   * `{ name: 'support', instructions: '…', tools: { allow: ['react.*', 'acme.*'] } }`). Loaded and
   * checked at start: a bad one stops the start naming file, field and rule. The built-in
   * `default` agent is always there.
   */
  agents?: { dir?: string; files?: readonly string[]; definitions?: readonly unknown[] };
  multiAction?: MultiActionMode;
  /** Default round budget (else env AI_REACT_MAX_ITERATIONS, else 15). */
  maxRounds?: number;
  /** Default context budget (else env DREACT_CONTEXT_MAX_TOKENS, else 80 000). */
  contextMaxTokens?: number;
  now?: () => Date;
  /** The Fargate exec backend, when configured: the worker then also runs the exec reaper's activity. */
  fargate?: FargateBackend;
  /**
   * The worker's deployment version for Worker Versioning (else DREACT_DEPLOYMENT_NAME +
   * DREACT_BUILD_ID; `null`: unversioned whatever the environment says).
   */
  deployment?: WorkerOptions['workerDeploymentOptions'] | null;
  /** Tracing (else from the environment: on when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  telemetry?: Telemetry;
  /** Embeddings for react.memsearch (else from DREACT_EMBEDDINGS_URL / _MODEL / _API_KEY; null: lexical only). */
  embeddings?: EmbeddingProvider | null;
  /**
   * Skills and knowledge space (else from DREACT_SKILLS_DIR / DREACT_KNOWLEDGE_DIR, opened and
   * indexed here, before the worker polls; null: none).
   */
  library?: Library | null;
  /** Short Postgres-only tools as local activities (else env DREACT_LOCAL_TOOLS, default on). */
  localTools?: boolean;
  /**
   * The journal of activities in flight (workers/activity-journal.ts): the worker that starts after
   * this one dies releases them at once. The worker process passes one; tests may.
   */
  journal?: ActivityJournal;
  /** MCP connection settings (start timeout, reconnect backoff); the servers come from the agents' files. */
  mcp?: McpStartOptions;
  /** Extra worker options (e.g. tuning in tests). */
  worker?: Partial<WorkerOptions>;
}

/** The registry's extras and replacements: the knowledge search and the skills catalogue only when configured. */
function libraryDeclarations(library: Library | undefined, extra: AnyToolDeclaration[]) {
  const skills = [...(library?.skills.values() ?? [])];
  return {
    extra: [...(library?.knowledge ? [reactSearchKnowledge] : []), ...extra],
    replace: skills.length > 0 ? [reactReadWithSkills(skillCatalogue(skills))] : [],
  };
}

/** Worker options without the workflow ones: a models, tools or exec worker runs activities only. */
function activityOnly(options: Partial<WorkerOptions> | undefined): Partial<WorkerOptions> {
  if (!options) return {};
  const { workflowBundle: _bundle, workflowsPath: _path, bundlerOptions: _bundler, ...rest } = options;
  return rest;
}

/** The queues of every role: explicit names over the base `taskQueue`, else the environment's. */
export function workerQueues(opts: Pick<CreateWorkerOptions, 'taskQueue' | 'queues'>, env = process.env): RoleQueues {
  const base = opts.taskQueue !== undefined ? queuesFromBase(opts.taskQueue) : configuredTaskQueues(env);
  return { ...base, ...opts.queues };
}

export async function createWorker(opts: CreateWorkerOptions): Promise<DreactWorker> {
  const roles = opts.roles
    ? parseWorkerRoles(opts.roles)
    : parseWorkerRoles(process.env.DREACT_WORKER_ROLES, 'DREACT_WORKER_ROLES');
  const queues = workerQueues(opts);
  const timeouts = opts.timeouts ?? timeoutSettings(process.env);
  const telemetry = opts.telemetry ?? setupTelemetry();
  const deployment = opts.deployment === undefined ? deploymentFromEnv() : (opts.deployment ?? undefined);
  const resolveProvider = opts.provider ?? defaultProviderResolver(process.env, opts.defaultModel);
  const embeddings = opts.embeddings === undefined ? embeddingProviderFromEnv() : (opts.embeddings ?? undefined);
  const library =
    opts.library === undefined ? await openLibrary(opts.db, libraryConfigFromEnv()) : (opts.library ?? undefined);
  const localTools = opts.localTools ?? envLocalTools();
  const extra = [...(opts.extraTools ?? []), ...(opts.tools ?? [])];
  const registryWith = (more: readonly DefinedTool[]) =>
    createToolRegistry({
      ...libraryDeclarations(
        library,
        [...extra, ...more].map((t) => t.declaration),
      ),
      localTools,
    });
  // The agents are checked against the worker's tools; their modules' tools join the registry.
  const catalogue = await loadAgents({
    toolIds: registryWith([]).ids(),
    ...(opts.agents?.dir !== undefined ? { dir: opts.agents.dir } : {}),
    ...(opts.agents?.files ? { files: opts.agents.files } : {}),
    ...(opts.agents?.definitions ? { definitions: opts.agents.definitions } : {}),
  });
  // Every agent's MCP servers, connected now (one down does not stop the start: ANNOUNCE names it);
  // their tools join the registry like module tools, and each agent's allow-list applies to them.
  const mcp = await McpConnections.start(mcpServersOf(catalogue), { db: opts.db.pool, ...opts.mcp });
  const agents = withMcpTools(catalogue, mcp);
  // agent.delegate joins the worker's tools when an agent lists subagents (activities/agents/delegate.ts).
  const delegation = agents.list().some((a) => (a.definition.subagents ?? []).length > 0)
    ? createDelegateTool()
    : undefined;
  // agent.tasks and agent.cancel come with it (background subagents, activities/agents/background-tasks.ts).
  const taskTools = delegation ? createTaskTools() : undefined;
  const delegateTools = delegation && taskTools ? [delegation.tool, ...taskTools.tools] : [];
  // An agent asking for a sandbox backend this worker cannot run stops the start (naming both).
  const execProblems = agentExecProblems(catalogue.list(), extra);
  if (execProblems.length > 0) throw new Error(`agent definitions: ${execProblems.join('; ')}`);
  const all = [...extra, ...catalogue.moduleTools, ...mcp.tools, ...delegateTools];
  const impls = builtinTools(
    all.map((t) => t.impl),
    {
      ...(embeddings ? { embeddings } : {}),
      ...(library ? { library } : {}),
    },
  );
  // The tools and agents are ports the worker swaps when MCP servers list more (activities/ports.ts).
  const tools = toolBox(
    { registry: registryWith([...catalogue.moduleTools, ...mcp.tools, ...delegateTools]), impls },
    mcp.connections.size > 0
      ? {
          notices: (agent, offered, owner) => mcp.notices(mcpServersFor(agent), offered, owner),
          listed: (id) => mcp.listed(id),
          prepare: (agent, owner) => mcp.prepare(agent, owner),
        }
      : {},
  );
  // Every declared tool has an implementation (else each call would be an "unknown tool" observation).
  const unimplemented = tools.registry.ids().filter((id) => !impls.has(id));
  if (unimplemented.length > 0)
    throw new Error(`tools without an implementation: ${unimplemented.join(', ')} (pass { declaration, impl } pairs)`);
  const settings = {
    multiAction: opts.multiAction ?? parseMultiActionMode(process.env.AI_REACT_AGENT_MULTI_ACTION),
    maxRounds: opts.maxRounds ?? envMaxIterations(),
    contextMaxTokens:
      opts.contextMaxTokens ?? resolveContextMaxTokens(undefined, process.env.DREACT_CONTEXT_MAX_TOKENS),
  };
  // Agents with skills / knowledge folders of their own: opened (and indexed) before the worker polls.
  const libraries = await openAgentLibraries(opts.db, agents, library);
  const viewsOver = (registry: typeof tools.registry) =>
    createAgentViews(withMcpTools(catalogue, mcp), registry, workerDefaultsOf(settings), {
      db: opts.db.pool,
      libraries,
    });
  const agentViews = swappableAgentViews(viewsOver(tools.registry));
  const cacheBytes = viewCacheBytes();
  const deps: ActivityDeps = createActivityDeps({
    db: opts.db,
    provider: resolveProvider,
    // Every model call's chain: cassette, timing, spans when tracing is on, meter, spend (activities/model/gateway.ts).
    models: modelGateway({ pool: opts.db.pool, resolve: resolveProvider, tracing: telemetry.enabled }),
    tools,
    agents: agentViews,
    ...(embeddings ? { embeddings } : {}),
    now: opts.now ?? (() => new Date()),
    ...(cacheBytes > 0 ? { viewCache: createViewCache({ maxBytes: cacheBytes }) } : {}),
    // Each turn schedules its activities on these queues with these timeouts (loadContext hands them over).
    placement: { queues: { models: queues.models, tools: queues.tools, exec: queues.exec }, timeouts: timeouts.turn },
  });
  // Tools a server lists later join the registry and the views; each turn offers those listed at its start.
  mcp.onToolsAdded((added) => {
    const grown = new Map(tools.impls);
    for (const t of added) grown.set(t.declaration.id, t.impl);
    const registry = registryWith([...catalogue.moduleTools, ...mcp.tools, ...delegateTools]);
    tools.swap({ registry, impls: grown });
    agentViews.swap(viewsOver(registry));
  });
  delegation?.bind(deps);
  taskTools?.bind(deps);
  // Every version this worker runs is stored: a later worker still builds a running turn's view.
  await deps.agents.save(opts.db.pool);
  // A bad DREACT_STREAM_WRITE_GAP_MS stops the start with its error, not every activity's first publish.
  streamWriteGapMs();
  const telemetryOptions = telemetry.workerOptions();
  const activities = {
    ...createWorkerActivities(deps),
    ...makeDelegationActivities(deps),
    // agent.delegate to a remote A2A agent (activities/agents/a2a-delegate.ts).
    [A2A_DELEGATE_ACTIVITY]: makeA2aDelegateActivity(deps),
    ...makeRemoteTaskActivities(deps),
    ...makeBackgroundTaskActivities(deps),
    ...makeDetachActivities(deps.db.pool),
    ...createEvalActivities(deps),
    // A schedule's runs (workflows/scheduled-turn.ts).
    ...makeScheduleRunActivities(opts.db.pool),
    ...makeDeliveryActivities(opts.db.pool),
    // The turn's look-up of a role queue's pollers when an activity waited there (workflows/role-queue.ts).
    describeRoleQueue,
    // MCP tools listed after start run under their own type through Temporal's default activity.
    ...(mcp.connections.size > 0 ? { default: lateMcpToolActivity(deps) } : {}),
    // Loaded only with the Fargate backend (the AWS SDK adds to every worker start otherwise).
    ...(opts.fargate
      ? (
          require('../activities/exec/fargate/reaper') as typeof import('../activities/exec/fargate/reaper')
        ).createReaperActivities(opts.fargate)
      : {}),
  };
  const throttle = `${timeouts.heartbeatThrottleMs} ms`;
  const shared: WorkerOptions = {
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: queues.workflows,
    activities,
    // Cancellation reaches an activity through its heartbeat: the profile's throttle bounds that
    // latency (local 1 s; cloud 5 s, core/turn/timeouts.ts) and how many heartbeats are sent.
    maxHeartbeatThrottleInterval: throttle,
    defaultHeartbeatThrottleInterval: throttle,
    ...(deployment ? { workerDeploymentOptions: deployment } : {}),
    ...telemetryOptions,
    interceptors: {
      ...telemetryOptions.interceptors,
      // The journal outermost: an activity is in it for the whole of its run.
      activity: [
        ...(opts.journal ? [journalInterceptor(opts.journal)] : []),
        ...(telemetryOptions.interceptors?.activity ?? []),
        // Postgres data errors fail at once, with our message (activities/bad-data.ts).
        badDataInterceptor(),
      ],
    },
  };
  // The workflows role also runs the turn's local activities and its Postgres bookkeeping
  // activities, which stay on the workflow's own queue; every role's worker registers every
  // activity, so whatever lands on its queue finds its implementation.
  const workflowBundle = roles.includes('workflows')
    ? await cachedWorkflowBundle(projectFile('workflows', 'index.ts'), {
        interceptorModules: telemetry.workflowInterceptorModules,
      })
    : undefined;
  const workers = new Map<WorkerRole, Worker>();
  try {
    for (const role of roles) {
      const own: Partial<WorkerOptions> =
        role === 'workflows'
          ? {
              workflowBundle,
              // A workflow task waits this long for the worker that last ran the turn before any worker may
              // take it (workers/tuning.ts says why 10 s and what it costs).
              stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START_MS,
            }
          : {};
      workers.set(
        role,
        await Worker.create({
          ...shared,
          ...own,
          taskQueue: queues[role],
          ...opts.roleWorker?.[role],
          ...(role === 'workflows' ? opts.worker : activityOnly(opts.worker)),
          // A role's queue is its own whatever `worker` says (tests pass { taskQueue } there too).
          ...(role !== 'workflows' ? { taskQueue: queues[role] } : {}),
          identity: `${opts.worker?.identity ?? `${process.pid}@${hostname()}`}/${role}`,
        }),
      );
    }
    // The agents' `schedules:` on this workflows queue: added, changed, removed (workers/schedule-reconcile.ts).
    if (roles.includes('workflows')) {
      const temporal = new Client({ connection: opts.connection, namespace: opts.namespace ?? 'default' });
      const report = await reconcileAgentSchedules(temporal, opts.db.pool, queues.workflows, catalogue.list());
      const changes = [
        ...report.added.map((id) => `+${id}`),
        ...report.changed.map((id) => `~${id}`),
        ...report.removed.map((id) => `-${id}`),
      ];
      if (changes.length > 0) console.error(`[worker] agent schedules: ${changes.join(' ')}`);
    }
  } catch (err) {
    await mcp.close();
    throw err;
  }
  // The MCP connections (and stdio servers) close when the worker stops.
  return new DreactWorker(workers, queues, () => mcp.close());
}
