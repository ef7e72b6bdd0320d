/**
 * Who polls a task queue, from Temporal's DescribeTaskQueue: for `dreact doctor` (every role's
 * queue, workers/roles.ts `taskQueuePollers`) and for a turn whose activity waited in a role's queue
 * past its notice time (`describeRoleQueue`, a local activity on the workflow worker: one call, only
 * then — never a polling loop in history).
 *
 * A poller counts as live when it polled within `LIVE_POLLER_MS`: an idle worker renews its long
 * poll about every minute, and the server keeps a poller in the list for minutes after it went away.
 */
import { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

export const LIVE_POLLER_MS = 90_000;

export interface QueuePollers {
  queue: string;
  /** `workflow` (workflow task pollers) or `activity`. */
  kind: 'workflow' | 'activity';
  /** Pollers seen within LIVE_POLLER_MS. */
  live: number;
  /** Their identities (`pid@host`), most recent first. */
  identities: string[];
}

function millis(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!t) return 0;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

export async function describePollers(
  service: WorkflowService,
  namespace: string,
  queue: string,
  kind: 'workflow' | 'activity',
  now = Date.now(),
): Promise<QueuePollers> {
  const { TaskQueueType } = temporal.api.enums.v1;
  const res = await service.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType:
      kind === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const live = (res.pollers ?? [])
    .map((p) => ({ identity: p.identity ?? '', at: millis(p.lastAccessTime) }))
    .filter((p) => now - p.at <= LIVE_POLLER_MS)
    .sort((a, b) => b.at - a.at);
  return { queue, kind, live: live.length, identities: live.map((p) => p.identity) };
}

export interface RoleQueueWait {
  role: string;
  taskQueue: string;
}

/** The Temporal UI line of a turn whose activity waits in a role's queue. */
export function waitingLine(wait: RoleQueueWait, pollers: Pick<QueuePollers, 'live'> | undefined): string {
  if (pollers === undefined) return `waiting for a \`${wait.role}\` worker (task queue \`${wait.taskQueue}\`)`;
  return pollers.live === 0
    ? `waiting for a \`${wait.role}\` worker: no worker polls task queue \`${wait.taskQueue}\``
    : `waiting for a \`${wait.role}\` worker: ${pollers.live} poll${pollers.live === 1 ? 's' : ''} task queue ` +
        `\`${wait.taskQueue}\`, all busy`;
}

/** The local activity: the line for the turn's current details (a failed lookup still says it waits). */
export async function describeRoleQueue(wait: RoleQueueWait): Promise<{ line: string; live?: number }> {
  const ctx = Context.current();
  try {
    const pollers = await describePollers(ctx.client.workflowService, ctx.info.namespace, wait.taskQueue, 'activity');
    return { line: waitingLine(wait, pollers), live: pollers.live };
  } catch (err) {
    ctx.log.warn(`could not describe task queue ${wait.taskQueue}: ${(err as Error).message}`);
    return { line: waitingLine(wait, undefined) };
  }
}
