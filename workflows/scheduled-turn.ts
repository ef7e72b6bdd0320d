/**
 * ScheduledTurnWorkflow (`sched.<scheduleId>-<scheduled time>`): one run of a schedule, started by
 * its Temporal Schedule (client/schedules/). It checks the caps and starts a normal turn through
 * the client's path (activities/schedules/run-activities.ts), waits for the turn, records how it
 * ended and, when the schedule has a webhook, delivers the answer there. A run a cap refuses is
 * recorded as refused and ends successfully: the Schedule does not retry it. Cancelled (the
 * `cancel` overlap policy: a newer run cancels this one) while its turn runs, it cancels the turn
 * and records that; cancelled while it starts the turn, it finishes starting it first; cancelled
 * after the turn ended, it records and delivers that turn's end.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ScheduleRunActivities } from '../activities/schedules/run-activities';
import type { DeliveryActivities } from '../activities/schedules/deliver';
import type { ScheduledRunInput, ScheduledRunOutcome } from '../core/schedules/run';
import { cancelSignal } from '../contract/definitions';

const { beginScheduledRun, finishScheduledRun } = proxyActivities<ScheduleRunActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});
const { awaitScheduledTurn } = proxyActivities<ScheduleRunActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  retry: { initialInterval: '1 second' },
});
const { deliverScheduledAnswer } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumAttempts: 5 },
});

export async function ScheduledTurnWorkflow(input: ScheduledRunInput): Promise<ScheduledRunOutcome> {
  // Not cancellable: a run replaced while it starts its turn finishes starting it (and records
  // it), then the cancellation reaches the wait below, which cancels that turn — none is left
  // running unrecorded.
  const begun = await CancellationScope.nonCancellable(() =>
    beginScheduledRun.executeWithOptions({ summary: `schedule ${input.scheduleId}: caps, then start the turn` }, [
      input,
    ]),
  );
  if (begun.refused) return { outcome: 'refused', conversationId: begun.conversationId, refusedReason: begun.reason };
  const { conversationId, turnIndex } = begun;
  let end;
  try {
    end = await awaitScheduledTurn.executeWithOptions({ summary: `wait for turn ${turnIndex} of ${conversationId}` }, [
      { conversationId, turnIndex },
    ]);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(async () => {
      try {
        await getExternalWorkflowHandle(begun.workflowId).signal(cancelSignal, {
          by: `schedule ${input.scheduleId}`,
          reason: 'a newer run of the schedule replaced this one (overlap policy cancel)',
        });
      } catch {
        // The turn ended meanwhile: nothing to cancel.
      }
      await finishScheduledRun.executeWithOptions({ summary: 'record the run (cancelled)' }, [
        { outcome: 'cancelled' },
      ]);
    });
    throw err;
  }
  // The turn ended: its run is recorded (and its answer delivered) as it ended, even if a newer
  // run replaces this one meanwhile.
  const ended = end;
  await CancellationScope.nonCancellable(async () => {
    await finishScheduledRun.executeWithOptions({ summary: `record the run (${ended.outcome})` }, [
      { outcome: ended.outcome, ...(ended.completionPath ? { completionPath: ended.completionPath } : {}) },
    ]);
    if (input.webhookUrl !== undefined)
      await deliverScheduledAnswer.executeWithOptions({ summary: 'deliver the answer to the webhook' }, [
        {
          scheduleId: input.scheduleId,
          url: input.webhookUrl,
          payload: {
            scheduleId: input.scheduleId,
            runWorkflowId: workflowInfo().workflowId,
            conversationId,
            turnIndex,
            outcome: ended.outcome,
            completionPath: ended.completionPath ?? null,
          },
        },
      ]);
  });
  return {
    outcome: ended.outcome,
    conversationId,
    turnIndex,
    ...(ended.completionPath ? { completionPath: ended.completionPath } : {}),
  };
}
