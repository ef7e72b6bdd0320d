/**
 * `defineTool`: the typed constructor of the pair every tool already is — a declaration (what the
 * model sees and how the workflow schedules a call) and an implementation (what the tool activity
 * runs) — as `createWorker({ extraTools })` and an agent's tool modules take it. Public through
 * `durable-react/tools` (workers/sdk/tools.ts).
 *
 * `run` receives the params already parsed by the tool's zod schema (the tool activity and the
 * exec supervisor check every call against the declaration first; an invalid call is an
 * observation and never reaches `run`), so it needs no coercion.
 *
 * Retry contract (core/tools/call-plan.ts), unchanged: THROWING asks Temporal to retry under the
 * tool's RetryPolicy (throw an error whose name is in `retry.nonRetryableErrorTypes`, or a
 * non-retryable ApplicationFailure, for input that can never succeed); RETURNING `{ ok: false }`
 * is an observation the model sees. A return value that is neither an observation nor a string is
 * a programming error: a non-retryable `ToolContractError`.
 */
import type { z } from 'zod';
import { ApplicationFailure, type LogMetadata, type Logger } from '@temporalio/common';
import {
  ToolRegistry,
  declareTool,
  type AnyToolDeclaration,
  type StrategyTrait,
  type ToolActivitySpec,
  type ToolRetryPolicy,
} from '../../core/tools/registry';
import type { AgentRef } from '../../core/agents/ref';
import type { TurnSettings } from '../../core/agents/settings';
import type { ToolStore } from '../../store/tool-store';
import type { ToolContext, ToolImpl, ToolObservation } from '../tools/types';
import { activityLog } from '../log';
import type { SecretValues } from './secrets';
import type { CallGovernance } from '../governance/call-governance';

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
export const DEFAULT_TOOL_RETRY: Readonly<ToolRetryPolicy> = Object.freeze({ maximumAttempts: 3 });

/**
 * What the tool activity adds to `ToolContext` for a turn run under an agent. Optional until the
 * activity passes them (a tool then sees `agent: undefined` and no secrets).
 */
export interface AgentToolContext {
  agent?: { ref: AgentRef; settings: TurnSettings };
  secrets?: SecretValues;
  /**
   * The tools the call's turn may use (its agent's registry, their implementations) and their
   * governance now (the tenant's policy, approvals): what the exec proxy offers generated code and
   * how it decides each call (activities/governance/round-tools.ts callGovernance).
   */
  toolset?: ToolSet;
}

export interface ToolSet {
  registry: ToolRegistry;
  impl(id: string): ToolImpl | undefined;
  governance?(): Promise<CallGovernance>;
}

/** What a tool's `run` may use. */
export interface ToolRunContext {
  conversationId: string;
  turnId: string;
  /** The call's id (`tc_…`), stable across retries: the key for idempotent side effects. */
  callId: string;
  /** The conversation's timeline, workspace files and sources pool. */
  store: ToolStore;
  /** Aborted when the call is cancelled (a steer, the worker shutting down). */
  signal: AbortSignal;
  /** Reports progress; a tool with its own activity and a heartbeat timeout must call it. */
  heartbeat(details?: unknown): void;
  now(): Date;
  /** The activity's logger, with the tool id and call id attached. */
  log: Logger;
  /** The turn's agent and its effective settings (undefined until the worker passes them). */
  agent: { ref: AgentRef; settings: TurnSettings } | undefined;
  /** A secret the agent declares, by name; throws for an undeclared one. Never put it in a result. */
  secret(name: string): string;
  /** Publishes a live delta for this call (e.g. canvas content). */
  stream: ToolContext['stream'];
}

/** An observation, or a string (shorthand for `{ ok: true, text }`). */
export type ToolResult = ToolObservation | string;

export interface ToolDefinition<P extends z.ZodType> {
  /** Stable id the model writes: lowercase segments joined by dots, e.g. `acme.weather`. */
  id: string;
  /** What the tool does and when to use it; shown to the model verbatim. */
  description: string;
  /** zod object schema of the params (the prompt's JSON schema is generated from it). */
  params: P;
  run(params: z.output<P>, ctx: ToolRunContext): Promise<ToolResult>;
  /** Multi-action trait: exploration reads, exploitation writes, neutral neither. Default `unknown` (runs alone). */
  strategy?: StrategyTrait;
  /** Start-to-close timeout of one attempt, ms. Default 60 000. */
  timeoutMs?: number;
  /** Temporal RetryPolicy fields over the default `{ maximumAttempts: 3 }`. */
  retry?: Partial<ToolRetryPolicy>;
  /** One line for the Temporal UI. Default `tool <id>`. */
  summary?(params: z.output<P>): string;
  /** Short and Postgres-only: run as a local activity (with DREACT_LOCAL_TOOLS=on). */
  local?: boolean;
  /**
   * The task queue its calls run on (e.g. workers near the system it calls, or a tenant class's);
   * default the tools role's queue (docs/worker-roles.md).
   */
  queue?: string;
  /** Run as an activity of its own: its type name (or spec with heartbeat timeout / task queue). */
  ownActivity?: string | Omit<ToolActivitySpec, 'then'>;
  /**
   * Human approval before each call (true), or before the calls whose params the function picks:
   * the turn waits for a person's approve / deny / edit (docs/governance.md).
   */
  needsApproval?: boolean | ((params: z.output<P>) => boolean);
}

export interface DefinedTool {
  declaration: AnyToolDeclaration;
  impl: ToolImpl;
}

export function defineTool<P extends z.ZodType>(def: ToolDefinition<P>): DefinedTool {
  const where = `defineTool(${JSON.stringify(def.id)})`;
  if ((def.params as unknown as { _zod?: { def?: { type?: string } } })._zod?.def?.type !== 'object')
    throw new Error(`${where}: params must be a zod object schema (z.object({...}))`);
  if (
    def.needsApproval !== undefined &&
    typeof def.needsApproval !== 'boolean' &&
    typeof def.needsApproval !== 'function'
  )
    throw new Error(`${where}: needsApproval must be a boolean or a function of the params`);
  const activity = typeof def.ownActivity === 'string' ? { name: def.ownActivity } : def.ownActivity;
  if (activity && def.local) throw new Error(`${where}: a tool is either local or has an activity of its own`);
  if (def.queue !== undefined && def.local)
    throw new Error(`${where}: a local tool runs in the turn's worker, not on a queue`);
  if (typeof def.run !== 'function') throw new Error(`${where}: run must be a function`);
  const declaration = declareTool<P>({
    id: def.id,
    description: def.description,
    params: def.params,
    strategy: def.strategy ?? 'unknown',
    timeoutMs: def.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    retry: { ...DEFAULT_TOOL_RETRY, ...def.retry },
    summarize: def.summary ?? (() => `tool ${def.id}`),
    ...(def.local ? { local: true } : {}),
    ...(def.queue !== undefined ? { queue: def.queue } : {}),
    ...(activity ? { activity: { ...activity } } : {}),
    ...(def.needsApproval ? { needsApproval: def.needsApproval } : {}),
  });
  try {
    new ToolRegistry([declaration]); // the registry's own checks: id, description, strategy, timeout, retry
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message.replace(/^tool registry: /, '')}`);
  }
  const impl: ToolImpl = {
    id: def.id,
    async run(params, ctx) {
      const result = await def.run(params as z.output<P>, runContext(def.id, ctx));
      return observationOf(def.id, result);
    },
  };
  return { declaration, impl };
}

/** True for a `{ declaration, impl }` pair (defineTool's result, createExecTool's, a hand-made one). */
export function isDefinedTool(v: unknown): v is DefinedTool {
  const t = v as Partial<DefinedTool> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.declaration?.id === 'string' &&
    typeof t.impl?.run === 'function' &&
    t.impl.id === t.declaration.id
  );
}

function runContext(toolId: string, ctx: ToolContext & AgentToolContext): ToolRunContext {
  const secrets = ctx.secrets;
  return {
    conversationId: ctx.conversationId,
    turnId: ctx.turnId,
    callId: ctx.callId,
    store: ctx.store,
    signal: ctx.signal,
    heartbeat: (details) => ctx.heartbeat(details),
    now: () => ctx.now(),
    log: withMeta(activityLog(), { tool: toolId, callId: ctx.callId }),
    agent: ctx.agent,
    secret(name) {
      if (!secrets) throw new Error(`secret ${JSON.stringify(name)}: this call runs without an agent's secrets`);
      return secrets.get(name);
    },
    stream: ctx.stream,
  };
}

function withMeta(parent: Logger, meta: LogMetadata): Logger {
  const log: Logger['log'] = (level, message, extra) => parent.log(level, message, { ...meta, ...extra });
  return {
    log,
    trace: (m, extra) => log('TRACE', m, extra),
    debug: (m, extra) => log('DEBUG', m, extra),
    info: (m, extra) => log('INFO', m, extra),
    warn: (m, extra) => log('WARN', m, extra),
    error: (m, extra) => log('ERROR', m, extra),
  };
}

function observationOf(toolId: string, result: unknown): ToolObservation {
  if (typeof result === 'string') return { ok: true, text: result };
  const o = result as Partial<ToolObservation> | null;
  if (typeof o === 'object' && o !== null && typeof o.ok === 'boolean' && typeof o.text === 'string')
    return o as ToolObservation;
  throw ApplicationFailure.create({
    type: 'ToolContractError',
    nonRetryable: true,
    message: `tool ${toolId} returned ${describe(result)}; return { ok, text } or a string (throw to be retried)`,
  });
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'object')
    return `an object without boolean ok and string text (keys: ${Object.keys(v).join(', ') || 'none'})`;
  return `a ${typeof v}`;
}
