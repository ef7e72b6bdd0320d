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
import type { ToolCallPlan } from '../turn/contracts';
import { RUN_TOOL_ACTIVITY, truncateSummary, type ToolActivityOptions, type ToolRegistry } from './registry';

export function toolCallPlan(callId: string, toolId: string, options: ToolActivityOptions): ToolCallPlan {
  return {
    callId,
    toolId,
    summary: options.summary,
    activity: options.activity,
    startToCloseTimeout: options.startToCloseTimeout,
    ...(options.heartbeatTimeout !== undefined ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
    retry: options.retry,
    ...(options.then ? { then: options.then } : {}),
    ...(options.concurrent ? { concurrent: true } : {}),
    ...(options.local ? { local: true } : {}),
    ...(options.approval ? { approval: options.approval } : {}),
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

export interface ScheduledToolCall extends ScheduledActivity {
  /** The activity scheduled after the first one, with the same input (ToolActivitySpec.then). */
  then?: ScheduledActivity;
  /** Run as a local activity in the turn's worker (no heartbeat timeout, no task queue). */
  local?: boolean;
}

/** How the workflow schedules a plan; plans from older builds map to what those builds did. */
export function scheduleToolCall(call: ToolCallPlan): ScheduledToolCall {
  if (call.activity === undefined && call.retry === undefined && call.startToCloseTimeout === undefined) {
    const retry: RetryPolicy | undefined = call.maximumAttempts
      ? { initialInterval: call.initialIntervalMs ?? 1000, maximumAttempts: call.maximumAttempts }
      : undefined;
    return {
      activity: RUN_TOOL_ACTIVITY,
      options: {
        summary: call.summary,
        startToCloseTimeout: call.startToCloseMs ?? 5 * 60_000,
        ...(retry ? { retry } : {}),
      },
    };
  }
  return {
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
