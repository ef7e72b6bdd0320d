/**
 * Tool registry: the declarations the decision protocol validates against and the
 * system prompt lists. Pure and deterministic (safe for workflows to import).
 *
 * A declaration holds everything the runtime needs to know about a tool without
 * running it: id, description, zod params (the single source of the JSON schema),
 * strategy trait (multi-action matrix), timeout, retry policy and a one-line
 * summary formatter for the Temporal UI. Implementations live elsewhere.
 */
import { z } from 'zod';
import type { RetryPolicy } from '@temporalio/common';
import type { ToolSpec } from '../model/provider';
import type { ApprovalSpec } from '../governance/approval';
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS } from '../governance/approval';
import { patternMatches } from '../agents/tool-filter';
import { toolRole } from '../turn/roles';

/**
 * How a tool relates to the workspace, used by the multi-action strategy matrix:
 * exploration reads, exploitation writes, neutral changes neither (plans, hides).
 * `unknown` is for tools nobody classified; they may only run as a lone action.
 */
export const STRATEGY_TRAITS = ['exploration', 'exploitation', 'neutral', 'unknown'] as const;
export type StrategyTrait = (typeof STRATEGY_TRAITS)[number];

/**
 * A tool's retry policy: Temporal's own RetryPolicy, carried unchanged through the call plan to
 * the workflow. `maximumAttempts` is required (a tool states how often it may run);
 * `nonRetryableErrorTypes` names `Error.name` / ApplicationFailure types never retried.
 */
export type ToolRetryPolicy = RetryPolicy & { maximumAttempts: number };

/**
 * A tool that runs as its own activity (instead of the shared `runTool`): the activity type that
 * histories show, and its own timeouts / task queue. The worker registers the activity from the
 * declaration and the tool's implementation (activities/turn/tool-activity.ts), with runTool's
 * idempotency, parameter checks, source merging and result append.
 */
export interface ToolActivitySpec {
  /** Activity type, e.g. `execPython`. Unique across the worker's activities. */
  name: string;
  /** Set for long-running tools that heartbeat (the implementation gets `heartbeat`). */
  heartbeatTimeoutMs?: number;
  /** Run on another task queue (e.g. workers that have a sandbox). Default: the turn's. */
  taskQueue?: string;
  /**
   * A second activity the workflow schedules after this one with the same input (e.g. exec: launch,
   * then await). The first one returns once its side effect has started; the second records the result.
   */
  then?: { name: string; heartbeatTimeoutMs?: number; startToCloseTimeoutMs?: number };
}

export interface ToolDeclaration<P extends z.ZodType = z.ZodType> {
  /** Stable id the model writes in `tool_call.tool_id` (e.g. `react.write`, `web_search`). */
  id: string;
  /** What the tool does and when to use it; shown to the model verbatim. */
  description: string;
  /** zod schema of the params; the JSON schema in the prompt is generated from it. */
  params: P;
  strategy: StrategyTrait;
  /** Start-to-close timeout of one attempt, ms. */
  timeoutMs: number;
  retry: ToolRetryPolicy;
  /** One line for the Temporal UI, e.g. `tool react.write files/notes.md`. */
  summarize(params: z.output<P>): string;
  /**
   * Required key order of the params object as written by the model (streaming
   * recorders depend on it). Keys present must appear at exactly these positions.
   */
  paramOrder?: readonly string[];
  /** The workspace path this call writes, for same-round collision checks. */
  writesPath?(params: z.output<P>): string | undefined;
  /** False for tools that must run alone (never inside a multi-action bundle). Default true. */
  bundleSafe?: boolean;
  /** True for the tool that consumes `<channel:code>` (the exec tool). */
  consumesCode?: boolean;
  /** The tool runs as its own activity; absent: the shared `runTool` activity. */
  activity?: ToolActivitySpec;
  /**
   * The task queue its calls run on (a tenant class's workers, workers near the system it calls);
   * absent: its role's queue — exec for the code-execution tools, else tools (core/turn/roles.ts).
   * `activity.taskQueue` wins. The agent file's `tools.queue` sets it for the agent's tools.
   */
  queue?: string;
  /** An exploration tool that writes workspace state (pull, checkout): never runs concurrently. */
  sequential?: boolean;
  /**
   * Short and touching only Postgres (react.read / write / plan / hide): runs as a Temporal LOCAL
   * activity in the worker that runs the turn — no server round trip, still retried under the
   * tool's policy and recorded in history. Ignored for tools with an activity of their own.
   */
  local?: boolean;
  /**
   * A person approves each call before it runs (true), or the calls whose (validated) params the
   * function picks. Decided when the call is planned, so it is in history (core/governance/approval.ts).
   */
  needsApproval?: boolean | ((params: z.output<P>) => boolean);
  /**
   * The call runs another agent's turn as a child workflow of the turn (agent.delegate,
   * core/agents/subagents.ts); the tool activity then records its answer.
   */
  child?: boolean;
  /**
   * Calls it picks (by their validated params) are planned as another activity of their own, with
   * its timeouts and retries and no child workflow — agent.delegate to a remote A2A agent
   * (core/agents/remote-subagents.ts). The worker registers that activity itself.
   */
  reroute?: (
    params: Record<string, unknown>,
  ) => { activity: ToolActivitySpec; timeoutMs: number; retry: ToolRetryPolicy } | undefined;
}

/** Approval rules over a registry's declarations: the agent's and the tenant policy's patterns. */
export interface ApprovalRules {
  /** The agent's `approval.tools` patterns. */
  agentTools?: readonly string[];
  /** The tenant / project policy's require-approval patterns. */
  policyTools?: readonly string[];
  timeoutSeconds?: number;
  onTimeout?: 'deny' | 'fail';
}

/** A declaration with its params type erased, as stored in the registry. */
export type AnyToolDeclaration = ToolDeclaration<z.ZodType>;

/** Helper that keeps the params type while declaring (so `summarize` is typed). */
export function declareTool<P extends z.ZodType>(decl: ToolDeclaration<P>): AnyToolDeclaration {
  return decl as unknown as AnyToolDeclaration;
}

/** How the workflow schedules one call: Temporal ActivityOptions fields (durations in ms). */
export interface ToolActivityOptions {
  /** Activity type: `runTool`, or the tool's own activity. */
  activity: string;
  startToCloseTimeout: number;
  heartbeatTimeout?: number;
  taskQueue?: string;
  /** `exec` for the code-execution tools (their own role's queue); absent: the tools role. */
  role?: 'exec';
  retry: RetryPolicy;
  summary: string;
  /** The activity scheduled after this one (ToolActivitySpec.then). */
  then?: { activity: string; startToCloseTimeout: number; heartbeatTimeout?: number };
  /** An exploration (read-only) tool: may run concurrently with the other explorations of its round. */
  concurrent?: boolean;
  /** Runs as a local activity (ToolDeclaration.local). */
  local?: boolean;
  /** The call waits for a person's decision (ToolDeclaration.needsApproval, ApprovalRules). */
  approval?: ApprovalSpec;
  /** The call runs a child workflow first (ToolDeclaration.child). */
  child?: boolean;
}

/** The activity every tool without its own runs in. */
export const RUN_TOOL_ACTIVITY = 'runTool';

export type ParamsResult =
  { ok: true; params: Record<string, unknown> } | { ok: false; issues: Array<{ path: string; message: string }> };

const ACTIVITY_NAME_RE = /^[A-Za-z][A-Za-z0-9_]*$/;
const TOOL_ID_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const SUMMARY_MAX = 160;

export class ToolRegistry {
  private readonly byId: ReadonlyMap<string, AnyToolDeclaration>;
  private readonly order: readonly string[];
  /** Approval rules over the declarations' own (core/governance/policy.ts governRegistry). */
  readonly approvalRules: ApprovalRules;

  constructor(declarations: readonly AnyToolDeclaration[], approvalRules: ApprovalRules = {}) {
    this.approvalRules = approvalRules;
    const map = new Map<string, AnyToolDeclaration>();
    for (const d of declarations) {
      if (!TOOL_ID_RE.test(d.id)) throw new Error(`tool registry: invalid tool id ${JSON.stringify(d.id)}`);
      if (map.has(d.id)) throw new Error(`tool registry: duplicate tool id ${d.id}`);
      if (!d.description.trim()) throw new Error(`tool registry: ${d.id} has no description`);
      if (!(STRATEGY_TRAITS as readonly string[]).includes(d.strategy)) {
        throw new Error(`tool registry: ${d.id} has unknown strategy ${JSON.stringify(d.strategy)}`);
      }
      if (!(d.timeoutMs > 0)) throw new Error(`tool registry: ${d.id} needs a positive timeoutMs`);
      if (!(d.retry.maximumAttempts >= 1)) throw new Error(`tool registry: ${d.id} needs retry.maximumAttempts >= 1`);
      if (d.activity && !ACTIVITY_NAME_RE.test(d.activity.name))
        throw new Error(`tool registry: ${d.id} has an invalid activity name ${JSON.stringify(d.activity.name)}`);
      if (d.activity?.then && !ACTIVITY_NAME_RE.test(d.activity.then.name))
        throw new Error(
          `tool registry: ${d.id} has an invalid then-activity name ${JSON.stringify(d.activity.then.name)}`,
        );
      map.set(d.id, d);
    }
    this.byId = map;
    this.order = declarations.map((d) => d.id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The declaration, or undefined for an unknown id. */
  find(id: string): AnyToolDeclaration | undefined {
    return this.byId.get(id);
  }

  /** The declaration; throws a readable error for an unknown id. */
  get(id: string): AnyToolDeclaration {
    const d = this.byId.get(id);
    if (!d) throw new Error(`unknown tool ${JSON.stringify(id)} (known: ${this.order.join(', ')})`);
    return d;
  }

  /** Tool ids in declaration order. */
  ids(): string[] {
    return [...this.order];
  }

  list(): AnyToolDeclaration[] {
    return this.order.map((id) => this.get(id));
  }

  /** JSON schema of the tool's params as the model writes them (zod input side, no `$schema`). */
  jsonSchema(id: string): Record<string, unknown> {
    return paramsJsonSchema(this.get(id).params);
  }

  /** Provider-neutral tool specs (for callers that want them, e.g. docs or harnesses). */
  specs(): ToolSpec[] {
    return this.list().map((d) => ({
      name: d.id,
      description: d.description,
      inputSchema: paramsJsonSchema(d.params),
    }));
  }

  /** Validates raw params against the tool's zod schema (defaults applied on success). */
  parseParams(id: string, raw: unknown): ParamsResult {
    const parsed = this.get(id).params.safeParse(raw);
    if (parsed.success) return { ok: true, params: parsed.data as Record<string, unknown> };
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    };
  }

  /** The Temporal UI summary for a call with already-validated params. */
  summary(id: string, params: Record<string, unknown>): string {
    return truncateSummary(this.get(id).summarize(params));
  }

  /**
   * Temporal activity options for one call of the tool (durations in ms, which Temporal
   * accepts): the activity type, timeouts, the tool's RetryPolicy unchanged, and the UI summary.
   */
  activityOptions(id: string, params: Record<string, unknown>): ToolActivityOptions {
    const declared = this.get(id);
    const routed = declared.reroute?.(params);
    const d: AnyToolDeclaration = routed ? { ...declared, ...routed, child: false } : declared;
    return {
      activity: d.activity?.name ?? RUN_TOOL_ACTIVITY,
      startToCloseTimeout: d.timeoutMs,
      ...(d.activity?.heartbeatTimeoutMs !== undefined ? { heartbeatTimeout: d.activity.heartbeatTimeoutMs } : {}),
      ...((d.activity?.taskQueue ?? d.queue) !== undefined ? { taskQueue: d.activity?.taskQueue ?? d.queue } : {}),
      ...(toolRole(d) === 'exec' ? { role: 'exec' as const } : {}),
      retry: {
        ...d.retry,
        ...(d.retry.nonRetryableErrorTypes ? { nonRetryableErrorTypes: [...d.retry.nonRetryableErrorTypes] } : {}),
      },
      summary: this.summary(id, params),
      ...(d.strategy === 'exploration' && !d.sequential ? { concurrent: true } : {}),
      ...(d.local && !d.activity ? { local: true } : {}),
      ...(d.child ? { child: true } : {}),
      ...this.approvalOf(d, params),
      ...(d.activity?.then
        ? {
            then: {
              activity: d.activity.then.name,
              startToCloseTimeout: d.activity.then.startToCloseTimeoutMs ?? d.timeoutMs,
              ...(d.activity.then.heartbeatTimeoutMs !== undefined
                ? { heartbeatTimeout: d.activity.then.heartbeatTimeoutMs }
                : {}),
            },
          }
        : {}),
    };
  }

  /**
   * Whether a call with these (validated) params needs a person's approval, and why — the
   * declaration, the agent's `approval.tools`, the tenant's policy (undefined: it does not).
   */
  approvalFor(id: string, params: Record<string, unknown>): ApprovalSpec | undefined {
    return this.approvalOf(this.get(id), params).approval;
  }

  private approvalOf(d: AnyToolDeclaration, params: Record<string, unknown>): { approval?: ApprovalSpec } {
    const r = this.approvalRules;
    const own =
      typeof d.needsApproval === 'function' ? asksApproval(d.needsApproval, params) : d.needsApproval === true;
    const source: ApprovalSpec['source'] | undefined = own
      ? 'tool'
      : r.agentTools?.some((p) => patternMatches(p, d.id))
        ? 'agent'
        : r.policyTools?.some((p) => patternMatches(p, d.id))
          ? 'policy'
          : undefined;
    if (!source) return {};
    return {
      approval: {
        source,
        timeoutSeconds: r.timeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS,
        onTimeout: r.onTimeout ?? 'deny',
      },
    };
  }

  /** Tools that run as their own activity (the worker registers one activity for each). */
  ownActivities(): Array<{ toolId: string; activity: ToolActivitySpec }> {
    return this.list().flatMap((d) => (d.activity ? [{ toolId: d.id, activity: d.activity }] : []));
  }

  /** The path the call writes (for collision checks), if the tool declares one. */
  writesPath(id: string, params: Record<string, unknown>): string | undefined {
    return this.get(id).writesPath?.(params);
  }
}

/** A needsApproval function that throws asks for approval (fail safe). */
function asksApproval(fn: (params: never) => boolean, params: Record<string, unknown>): boolean {
  try {
    return fn(params as never) === true;
  } catch {
    return true;
  }
}

/** JSON schema for a params schema: input side (defaults make fields optional), `$schema` dropped. */
export function paramsJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _ignored, ...rest } = json;
  return dropSafeIntegerBounds(rest) as Record<string, unknown>;
}

/** zod emits ±MAX_SAFE_INTEGER bounds for every `.int()`; they only cost prompt tokens. */
function dropSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropSafeIntegerBounds);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    out[k] = dropSafeIntegerBounds(v);
  }
  return out;
}

export function truncateSummary(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= SUMMARY_MAX ? oneLine : `${oneLine.slice(0, SUMMARY_MAX - 1)}…`;
}

/**
 * A registry holding only `ids`, in the original declaration order; an unknown id throws.
 * The one way to narrow a registry (per-turn tool selection, tests, harnesses).
 */
export function restrictRegistry(registry: ToolRegistry, ids: readonly string[]): ToolRegistry {
  const keep = new Set(ids);
  for (const id of keep) registry.get(id);
  return new ToolRegistry(registry.list().filter((d) => keep.has(d.id)));
}
