/**
 * The turn's side of tool calls: a round's calls run stage by stage (core/tools/call-plan.ts
 * callStages), each as its activity — `runTool` or the tool's own, a local activity for short
 * Postgres-only tools — with the tool's timeouts and RetryPolicy. Consecutive read-only calls of
 * one round run concurrently and their results are appended in call order once all settled. A
 * failure that outlives the tool's retries becomes the call's observation (`recordToolFailure`);
 * a steer's cancellation ends the round's remaining calls.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { TurnActivities } from '../../activities/turn-activities';
import { callStages, scheduleToolCall, type ScheduledActivity, type ToolCallPlan } from '../../core/tools/call-plan';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import { failureMessage } from '../failure';
import { approvalStep, type ApprovalStep } from './approval-step';
import { subagentStep, type SubagentStep } from './subagent-step';
import type { RoleQueues } from '../role-queue';
import type { TurnRun } from './run';
import { SHORT_STEP } from './activity-options';
import { atLeast } from '../../core/turn/timeouts';
import { A2A_DELEGATE_ACTIVITY } from '../../core/agents/remote-subagents';

const { recordToolFailure, appendToolResults } = proxyActivities<TurnActivities>(SHORT_STEP);

/**
 * A steer's finalize round must not overlap a cancelled call (its last stream deltas and partial
 * blocks land first): a cancelled tool activity is awaited until its cancellation completed.
 */
const cancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;

/**
 * Tool calls: `runTool` or a tool's own activity, by the name in the call plan. Every call passes
 * the tool's own timeouts and RetryPolicy (core/tools/call-plan.ts); these are the fallbacks.
 */
const toolActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  cancellationType,
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * Short Postgres-only tools (react.read / write / plan / hide) as LOCAL activities: run by the
 * worker executing this workflow task, no server round trip; retried under the tool's policy and
 * recorded in history as markers. Each call passes its own timeout, retry policy and summary.
 */
const localToolActivities = proxyLocalActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  cancellationType,
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});

export interface ToolStep {
  /** Runs one round's tool calls; resolves `true` when a steer interrupted them. */
  run(calls: ToolCallPlan[]): Promise<boolean>;
  /** The subagent turns its delegate calls ran (workflows/turn/subagent-step.ts), and their usage. */
  readonly subagents: Pick<SubagentStep, 'count' | 'usage'>;
}

/**
 * The round's tool calls of the turn `run`. Tool activities other than approvals and delegations
 * read the turn's agent version from the turn header beside the call block: the ref is not repeated
 * in every tool input's history.
 */
export function toolStep(run: TurnRun): ToolStep {
  const { conversationId, turnId, cancellable, agent, roles } = run;
  // Calls whose plan asks for approval wait for the decideToolCall Update first.
  const approvals = approvalStep(run);
  // Delegate calls run a subagent's turn as a child workflow.
  const subagents = subagentStep(run);

  const toolInput = (call: ToolCallPlan, heldForBatch: boolean): ToolInput => ({
    conversationId,
    turnId,
    callId: call.callId,
    toolId: call.toolId,
    ...(agent && call.child ? { agent } : {}),
    ...(heldForBatch ? { heldForBatch } : {}),
  });

  return {
    subagents,
    async run(calls) {
      // Each call is its own activity with the tool's timeout and retries. Consecutive read-only
      // calls of one round (native parallel calls, accepted multi-action explorations) run
      // concurrently: their results are held and appended in call order once all are done (or a
      // steer cancelled the rest), so one failure loses nothing and the timeline reads in call
      // order. Other calls run one after another (core/tools/call-plan.ts callStages).
      let interrupted = false;
      for (const stage of callStages(calls)) {
        if (stage.length > 1) {
          // Every call settles (finished, or its cancellation completed) before the batch is appended,
          // so no result arrives after it.
          interrupted =
            (await cancellable(async () => {
              const settled = await Promise.allSettled(
                stage.map((call) => runToolCall(call, toolInput(call, true), approvals, subagents, roles)),
              );
              const failed = settled.find((r) => r.status === 'rejected');
              if (failed) throw failed.reason;
              return settled;
            })) === undefined;
          await appendToolResults.executeWithOptions({ summary: `append ${stage.length} tool results in call order` }, [
            { conversationId, turnId, callIds: stage.map((c) => c.callId) },
          ]);
        } else {
          for (const call of stage) {
            interrupted =
              (await cancellable(() => runToolCall(call, toolInput(call, false), approvals, subagents, roles))) ===
              undefined;
            if (interrupted) break;
          }
        }
        if (interrupted) break;
      }
      return interrupted;
    },
  };
}

/**
 * One tool call as its activity. A failure that outlives the tool's retries (or is
 * non-retryable, or a timeout) becomes the call's observation, so the model sees it and the turn
 * goes on; a steer's cancellation propagates.
 */
async function runToolCall(
  call: ToolCallPlan,
  planned: ToolInput,
  approvals: ApprovalStep,
  subagents: SubagentStep,
  roles: RoleQueues,
): Promise<ToolOutcome> {
  let input = planned;
  if (call.approval) {
    // A steer's cancellation of the wait propagates like a cancelled activity's.
    const gate = await approvals.gate(call, input);
    if (!gate.run) return gate.outcome;
    if (gate.params) input = { ...input, params: gate.params };
  }
  const scheduled = scheduleToolCall(call);
  try {
    if (scheduled.kind === 'child') return await subagents.run(input, scheduled);
    if (scheduled.local) {
      const { summary, startToCloseTimeout, retry } = scheduled.options;
      return await localToolActivities[scheduled.activity]!.executeWithOptions(
        { summary, startToCloseTimeout, ...(retry ? { retry } : {}) },
        [input],
      );
    }
    // On the role's queue (exec for the code-execution tools, else tools) unless the tool or its agent
    // names its own; the role's heartbeat timeout is a floor under the tool's.
    const role = call.role ?? 'tools';
    const floor = role === 'exec' ? roles.timeouts.execHeartbeatMs : roles.timeouts.toolsHeartbeatMs;
    const runOn = (step: ScheduledActivity) =>
      roles.run(role, step.options.taskQueue, (placed) => {
        const heartbeatTimeout = atLeast(step.options.heartbeatTimeout, floor);
        return toolActivities[step.activity]!.executeWithOptions(
          { ...step.options, ...(heartbeatTimeout !== undefined ? { heartbeatTimeout } : {}), ...placed },
          [input],
        );
      });
    // A waited call to a remote A2A agent: a steer is forwarded to the remote task (subagent-step.ts).
    const first =
      scheduled.activity === A2A_DELEGATE_ACTIVITY
        ? await subagents.runRemote(input, () => runOn(scheduled))
        : await runOn(scheduled);
    // A delegate call to a remote A2A agent reports the remote's usage (older histories: none).
    if (first.subagentUsage) subagents.addRemote(first.subagentUsage);
    // A tool with two activities (exec: launch, then await) gets the second with the same input.
    if (!scheduled.then) return first;
    return await runOn(scheduled.then);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure ? err.cause : err;
    return recordToolFailure.executeWithOptions({ summary: `record failure: ${call.summary}`.slice(0, 160) }, [
      {
        ...input,
        error: failureMessage(cause),
        ...(cause instanceof ApplicationFailure && cause.type ? { failureType: cause.type } : {}),
        ...(err instanceof ActivityFailure ? { retryState: String(err.retryState) } : {}),
      },
    ]);
  }
}
