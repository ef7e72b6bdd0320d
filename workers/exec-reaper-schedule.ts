/**
 * Creates (or brings up to date) the Temporal Schedule that runs the exec reaper. Idempotent: the
 * worker calls it at start when the Fargate backend is configured; so can a deploy script.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';

export const EXEC_REAPER_SCHEDULE_ID = 'dreact-exec-reaper';

export interface ReaperScheduleOptions {
  taskQueue: string;
  scheduleId?: string;
  /** Interval between runs (Temporal duration string), default 5 minutes. */
  every?: string;
}

export async function ensureExecReaperSchedule(client: Client, opts: ReaperScheduleOptions): Promise<string> {
  const scheduleId = opts.scheduleId ?? EXEC_REAPER_SCHEDULE_ID;
  const options: ScheduleOptions = {
    scheduleId,
    spec: { intervals: [{ every: (opts.every ?? '5 minutes') as `${number} minutes` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'ExecReaperWorkflow',
      args: [],
      taskQueue: opts.taskQueue,
      workflowId: `${scheduleId}-run`,
      staticSummary: 'exec reaper',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    memo: { purpose: 'stop exec sandboxes whose turn has ended' },
  };
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({
      ...prev,
      spec: options.spec,
      action: options.action,
      policies: { ...prev.policies, ...options.policies },
    }));
  }
  return scheduleId;
}
