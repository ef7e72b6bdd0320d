/**
 * Schedules a turn's activities on their role's task queue (core/turn/roles.ts) and makes a role
 * without a free worker visible. The queues and timeouts come from loadContext's result
 * (LoadedContext.placement), never from the environment.
 *
 * An activity on a role's queue carries a schedule-to-start timeout of `waitingNoticeMs`: while
 * workers poll the queue it starts well within that and nothing is added to history. When it
 * times out (no worker of that role, or all of them busy) the turn asks the server once who polls
 * the queue (`describeRoleQueue`, a local activity), says so in its current details — "waiting for
 * a `exec` worker: no worker polls task queue `dreact-exec`" — and schedules the same activity
 * again without the bound, waiting as long as it takes. Nothing was started, so nothing ran twice.
 */
import { ActivityFailure, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { ActivityRole } from '../core/turn/roles';
import type { TurnPlacement } from '../core/turn/activity-contracts';
import { LOCAL_TURN_TIMEOUTS, type TurnTimeouts } from '../core/turn/timeouts';
import type { describeRoleQueue as DescribeRoleQueue } from '../activities/temporal/pollers';

const { describeRoleQueue } = proxyLocalActivities<{ describeRoleQueue: typeof DescribeRoleQueue }>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 2 },
});

export interface RoleOptions {
  taskQueue?: string;
  scheduleToStartTimeout?: number;
}

export interface RoleQueues {
  readonly timeouts: TurnTimeouts;
  /** Runs `start` with the role's queue (or `queue`, a tool's or agent's own), reporting a long wait. */
  run<T>(role: ActivityRole, queue: string | undefined, start: (options: RoleOptions) => Promise<T>): Promise<T>;
  /** The waits shown now, one line each. */
  waiting(): string[];
}

export function roleQueues(placement: TurnPlacement | undefined, onChange: () => void = () => {}): RoleQueues {
  const timeouts = placement?.timeouts ?? LOCAL_TURN_TIMEOUTS;
  const waits = new Map<number, string>();
  let next = 0;
  return {
    timeouts,
    waiting: () => [...new Set(waits.values())],
    async run(role, queue, start) {
      const taskQueue = queue ?? placement?.queues[role];
      // Histories recorded before roles: the turn's own queue, as then.
      if (taskQueue === undefined) return start({});
      try {
        return await start({ taskQueue, scheduleToStartTimeout: timeouts.waitingNoticeMs });
      } catch (err) {
        if (!(err instanceof ActivityFailure && isScheduleToStart(err.cause))) throw err;
      }
      const { line } = await describeRoleQueue.executeWithOptions(
        { summary: `who polls ${taskQueue} (a ${role} activity waited ${timeouts.waitingNoticeMs / 1000} s)` },
        [{ role, taskQueue }],
      );
      const id = next++;
      waits.set(id, line);
      onChange();
      try {
        return await start({ taskQueue });
      } finally {
        waits.delete(id);
        onChange();
      }
    },
  };
}

function isScheduleToStart(cause: unknown): boolean {
  return cause instanceof TimeoutFailure && cause.timeoutType === 'SCHEDULE_TO_START';
}
