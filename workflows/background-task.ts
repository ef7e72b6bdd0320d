/**
 * BackgroundTaskWorkflow (id `conv/<parent>/task/<callId>`): a background delegate call's task
 * (core/agents/background.ts). Started by the delegating turn as a child it ABANDONs, so it outlives
 * that turn; it runs the subagent's turn as its own child (the same TurnWorkflow, ids and options as a
 * waited delegation: workflows/turn/subagent-start.ts), then `deliverBackgroundTask` hands the answer
 * to the parent conversation as a followup, exactly once (the conversation dedupes the followup by
 * the task's message id; the activity's retries repeat the same signal).
 *
 * A cancel of this workflow (agent.cancel) is forwarded to the subagent's turn as a turn cancel
 * (`cancel` signal): it stops where it is, closes its timeline and ends `cancelled`; the task is then
 * recorded as cancelled and delivers nothing. The subagent's spend rolls up through its
 * subagent_delegations link (written before the start) as for a waited call.
 */
import {
  ActivityCancellationType,
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
} from '@temporalio/workflow';
import type { makeBackgroundTaskActivities } from '../activities/agents/background-tasks';
import type { makeRemoteTaskActivities, RemoteTaskOutcome } from '../activities/agents/a2a-background';
import { A2A_DELEGATE_PLAN } from '../core/agents/remote-subagents';
import { failureMessage } from './failure';
import type { makeDetachActivities } from '../activities/agents/detach';
import type { TaskStatus } from '../core/agents/background';
import type { Usage } from '../core/model/provider';
import { ZERO_USAGE } from '../core/model/usage';
import { cancelSignal } from '../contract/definitions';
import { startSubagentTurn, subagentTurnUsage, type SubagentStart } from './turn/subagent-start';

export interface BackgroundTaskInput {
  parentConversationId: string;
  callId: string;
  taskId: string;
  /**
   * The subagent's turn (its conversation, workflow id, agent and task); `remote`: the subagent is
   * a remote A2A agent — the task runs its remote task (`runRemoteTask`), no turn.
   */
  start: Omit<SubagentStart, 'background'>;
  /**
   * The subagent's turn runs already (a waited call a steer detached, workflows/turn/subagent-step.ts):
   * the task waits for it through an activity instead of starting it.
   */
  adopt?: boolean;
}

export interface BackgroundTaskResult {
  status: TaskStatus;
  delivered: boolean;
  /** The subagent turn's model usage (its compactions and own subagents included). */
  usage: Usage;
}

const { awaitSubagentTurn } = proxyActivities<ReturnType<typeof makeDetachActivities>>({
  startToCloseTimeout: '7 days',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const { deliverBackgroundTask } = proxyActivities<ReturnType<typeof makeBackgroundTaskActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

// The remote call's own plan (activities/agents/a2a-background.ts): its cancellation completes
// (CancelTask sent to the remote) before the task is recorded.
const { runRemoteTask } = proxyActivities<ReturnType<typeof makeRemoteTaskActivities>>({
  startToCloseTimeout: A2A_DELEGATE_PLAN.timeoutMs,
  heartbeatTimeout: A2A_DELEGATE_PLAN.activity.heartbeatTimeoutMs!,
  retry: { ...A2A_DELEGATE_PLAN.retry, nonRetryableErrorTypes: [...A2A_DELEGATE_PLAN.retry.nonRetryableErrorTypes!] },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** A remote A2A agent's task: the remote call, cancelled with the task (its scope's `cancel`). */
async function remoteTask(input: BackgroundTaskInput, scope: CancellationScope): Promise<RemoteTaskOutcome> {
  try {
    return await scope.run(() =>
      runRemoteTask.executeWithOptions(
        { summary: `remote subagent ${input.start.agent}: task ${input.taskId}`.slice(0, 160) },
        [{ parentConversationId: input.parentConversationId, taskId: input.taskId }],
      ),
    );
  } catch (err) {
    if (scope.consideredCancelled) return { status: 'cancelled', answer: null, error: null, usage: ZERO_USAGE };
    return { status: 'failed', answer: null, error: failureMessage(err), usage: ZERO_USAGE };
  }
}

export async function BackgroundTaskWorkflow(input: BackgroundTaskInput): Promise<BackgroundTaskResult> {
  const { start } = input;
  let cancelled = false;
  let started = false;
  // A remote task's call runs in a scope of its own the task's cancel cancels.
  const remote = start.remote ? new CancellationScope() : undefined;
  // Sent outside the cancelled scope (a command of the cancelled root scope would be cancelled too).
  const forward = () =>
    CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(start.workflowId).signal(cancelSignal, {
        by: 'agent.cancel',
        reason: `background task ${input.taskId} cancelled`,
      }),
    ).catch((err: unknown) =>
      log.warn('could not reach the subagent', { workflowId: start.workflowId, error: String(err) }),
    );
  // The cancel is forwarded as a turn cancel; the subagent's turn and the delivery run to their end.
  CancellationScope.current().cancelRequested.catch(() => {
    cancelled = true;
    if (remote) remote.cancel();
    else if (started) void forward();
  });
  return CancellationScope.nonCancellable(async () => {
    let usage = ZERO_USAGE;
    if (remote) {
      const outcome = await remoteTask(input, remote);
      const { usage: used, ...ended } = outcome;
      const delivered = await deliverBackgroundTask.executeWithOptions(
        { summary: `deliver background task ${input.taskId} to ${input.parentConversationId}`.slice(0, 160) },
        [{ parentConversationId: input.parentConversationId, taskId: input.taskId, cancelled, remote: ended }],
      );
      return { ...delivered, usage: used };
    }
    if (input.adopt) {
      // Its usage rolled up through its spend link; this task reports none of its own.
      started = true;
      if (cancelled) void forward();
      await awaitSubagentTurn.executeWithOptions(
        { summary: `await detached subagent ${start.workflowId}`.slice(0, 160) },
        [{ workflowId: start.workflowId }],
      );
    } else {
      const child = await startSubagentTurn(start, input.callId);
      started = true;
      if (cancelled) void forward();
      try {
        const result = await child.result();
        usage = subagentTurnUsage(result);
      } catch (err) {
        // A failed turn is the task's outcome: the activity reads its failure from its turns row.
        log.warn('background subagent turn failed', { workflowId: start.workflowId, error: String(err) });
      }
    }
    const delivered = await deliverBackgroundTask.executeWithOptions(
      { summary: `deliver background task ${input.taskId} to ${input.parentConversationId}`.slice(0, 160) },
      [{ parentConversationId: input.parentConversationId, taskId: input.taskId, cancelled }],
    );
    return { ...delivered, usage };
  });
}
