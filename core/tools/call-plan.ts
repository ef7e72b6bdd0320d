/**
 * Tool call plans: what the workflow needs to schedule one tool call — the activity type, its
 * timeouts and the tool's Temporal RetryPolicy, unchanged from the declaration — and the options
 * the workflow passes to Temporal for a plan (plans recorded by older builds included).
 *
 * The retry contract of tool implementations: THROWING means "retry me" (Temporal retries under
 * the tool's RetryPolicy; throw a non-retryable ApplicationFailure, or an error whose name is in
 * `nonRetryableErrorTypes`, for input that can never succeed); RETURNING `ok: false` is an
 * observation for the model. When the retries are spent, the workflow records the failure as the
 * call's observation (`recordToolFailure`), so the model sees it and the turn goes on.
 */
import type { RetryPolicy } from '@temporalio/common';
import type { ApprovalSpec } from '../governance/approval';
import { RUN_TOOL_ACTIVITY, truncateSummary, type ToolActivityOptions, type ToolRegistry } from './registry';

/**
 * One tool call the workflow runs as an activity, with the tool's own activity type, timeouts
 * and Temporal RetryPolicy (built by `toolCallPlan` below).
 */
export interface ToolCallPlan {
  callId: string;
  toolId: string;
  /** Activity summary for Temporal UI, e.g. `tool react.write files/notes.md`. */
  summary: string;
  /** Activity type; absent in plans recorded before tools could have their own: `runTool`. */
  activity?: string;
  startToCloseTimeout?: number;
  heartbeatTimeout?: number;
  taskQueue?: string;
  /** `exec` for the code-execution tools: the turn runs them on the exec role's queue (absent: tools). */
  role?: 'exec';
  retry?: RetryPolicy;
  /** A second activity scheduled after `activity` with the same input (e.g. exec: launch, then await). */
  then?: { activity: string; startToCloseTimeout: number; heartbeatTimeout?: number };
  /** A read-only (exploration) call: runs concurrently with its neighbours of the same kind. */
  concurrent?: boolean;
  /** A short Postgres-only tool: runs as a local activity (no server round trip). */
  local?: boolean;
  /** The call waits for a person's decision before it runs (workflows/turn/approval-step.ts). */
  approval?: ApprovalSpec;
  /** The call runs another agent's turn as a child workflow first (agent.delegate, workflows/turn/subagent-step.ts). */
  child?: boolean;
  /** Plans recorded before the RetryPolicy was carried whole (read by old histories only). */
  startToCloseMs?: number;
  maximumAttempts?: number;
  initialIntervalMs?: number;
}

export function toolCallPlan(callId: string, toolId: string, options: ToolActivityOptions): ToolCallPlan {
  return {
    callId,
    toolId,
    summary: options.summary,
    activity: options.activity,
    startToCloseTimeout: options.startToCloseTimeout,
    ...(options.heartbeatTimeout !== undefined ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
    ...(options.role ? { role: options.role } : {}),
    retry: options.retry,
    ...(options.then ? { then: options.then } : {}),
    ...(options.concurrent ? { concurrent: true } : {}),
    ...(options.local ? { local: true } : {}),
    ...(options.approval ? { approval: options.approval } : {}),
    ...(options.child ? { child: true } : {}),
  };
}

/**
 * A round's calls as stages run one after another, in call order; the calls of one stage run
 * concurrently. Consecutive read-only (exploration) calls share a stage; every other call — a
 * write, an exec, a plan — is a stage of its own, so a read that follows a write sees it.
 */
export function callStages(calls: readonly ToolCallPlan[]): ToolCallPlan[][] {
  const stages: ToolCallPlan[][] = [];
  for (const call of calls) {
    const last = stages.at(-1);
    if (call.concurrent && last?.[0]?.concurrent) last.push(call);
    else stages.push([call]);
  }
  return stages;
}

/**
 * Options for a call runTool will answer with an error observation (a tool name the model made
 * up, params that fail validation): one attempt in runTool, so the tool_use keeps its pair.
 */
export function invalidCallOptions(registry: Pick<ToolRegistry, 'find'>, toolId: string): ToolActivityOptions {
  return {
    activity: RUN_TOOL_ACTIVITY,
    startToCloseTimeout: registry.find(toolId)?.timeoutMs ?? 60_000,
    retry: { maximumAttempts: 1 },
    summary: truncateSummary(`tool ${toolId} (invalid call)`),
  };
}

/** One activity the workflow schedules for a call: its type and options. */
export interface ScheduledActivity {
  activity: string;
  options: {
    summary: string;
    startToCloseTimeout: number;
    heartbeatTimeout?: number;
    taskQueue?: string;
    retry?: RetryPolicy;
  };
}

/** A call run as its activity: alone, as a local activity, or two activities in a row. */
export interface ScheduledActivityCall extends ScheduledActivity {
  kind: 'activity';
  /** The activity scheduled after the first one, with the same input (ToolActivitySpec.then). */
  then?: ScheduledActivity;
  /** Run as a local activity in the turn's worker (no heartbeat timeout, no task queue). */
  local?: boolean;
}

/**
 * A call that runs another agent's turn as a child workflow (agent.delegate): `prepare` checks the
 * call and opens the child's conversation, the child runs, then the tool activity (`activity`,
 * `options`) appends the child's answer as the call's result (workflows/turn/subagent-step.ts).
 */
export interface ScheduledChildCall extends ScheduledActivity {
  kind: 'child';
  prepare: ScheduledActivity;
  then?: never;
  local?: never;
}

export type ScheduledToolCall = ScheduledActivityCall | ScheduledChildCall;

/** The activity that checks a delegate call and opens its child conversation. */
export const PREPARE_DELEGATION_ACTIVITY = 'prepareDelegation';

/** How the workflow schedules a plan; plans from older builds map to what those builds did. */
export function scheduleToolCall(call: ToolCallPlan): ScheduledToolCall {
  if (call.child) {
    const options = {
      summary: call.summary,
      startToCloseTimeout: call.startToCloseTimeout ?? 30_000,
      ...(call.retry ? { retry: call.retry } : {}),
    };
    return {
      kind: 'child',
      activity: call.activity ?? RUN_TOOL_ACTIVITY,
      options,
      prepare: {
        activity: PREPARE_DELEGATION_ACTIVITY,
        options: { ...options, summary: truncateSummary(`prepare ${call.summary}`) },
      },
    };
  }
  if (call.activity === undefined && call.retry === undefined && call.startToCloseTimeout === undefined) {
    const retry: RetryPolicy | undefined = call.maximumAttempts
      ? { initialInterval: call.initialIntervalMs ?? 1000, maximumAttempts: call.maximumAttempts }
      : undefined;
    return {
      kind: 'activity',
      activity: RUN_TOOL_ACTIVITY,
      options: {
        summary: call.summary,
        startToCloseTimeout: call.startToCloseMs ?? 5 * 60_000,
        ...(retry ? { retry } : {}),
      },
    };
  }
  return {
    kind: 'activity',
    activity: call.activity ?? RUN_TOOL_ACTIVITY,
    options: {
      summary: call.summary,
      startToCloseTimeout: call.startToCloseTimeout ?? 5 * 60_000,
      ...(call.heartbeatTimeout !== undefined ? { heartbeatTimeout: call.heartbeatTimeout } : {}),
      ...(call.taskQueue !== undefined ? { taskQueue: call.taskQueue } : {}),
      ...(call.retry ? { retry: call.retry } : {}),
    },
    ...(call.local && !call.then && call.taskQueue === undefined ? { local: true } : {}),
    ...(call.then
      ? {
          then: {
            activity: call.then.activity,
            options: {
              summary: truncateSummary(`await ${call.summary}`),
              startToCloseTimeout: call.then.startToCloseTimeout,
              ...(call.then.heartbeatTimeout !== undefined ? { heartbeatTimeout: call.then.heartbeatTimeout } : {}),
              ...(call.taskQueue !== undefined ? { taskQueue: call.taskQueue } : {}),
              ...(call.retry ? { retry: call.retry } : {}),
            },
          },
        }
      : {}),
  };
}
