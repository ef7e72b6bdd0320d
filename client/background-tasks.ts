/**
 * Background tasks from the client side (docs/agents.md "Background subagents"): the tasks a
 * conversation's `agent.delegate` calls started in the background (Postgres, oldest first), and the
 * cancel of one — the same as the `agent.cancel` tool: Temporal is asked to cancel the task's
 * workflow, which forwards a turn cancel to its subagent and delivers nothing.
 *
 * Used by DreactClient (`tasks`, `cancelTask`), so by the gateway (`GET /v1/conversations/:id/tasks`,
 * `POST …/tasks/:taskId/cancel`) and the CLI (`dreact tasks`), and by the agent.cancel tool.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Queryable } from '../store/db';
import type { TaskStatus } from '../core/agents/background';
import { listBackgroundTasks, loadBackgroundTask, type BackgroundTask } from '../store/background-task-store';

/** A task as the client API, the gateway and `dreact tasks --json` show it (times as ISO strings). */
export type TaskView = Omit<BackgroundTask, 'conversationId' | 'createdAt' | 'finishedAt' | 'deliveredAt'> & {
  createdAt: string;
  finishedAt: string | null;
  deliveredAt: string | null;
};

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function taskView(t: BackgroundTask): TaskView {
  const { conversationId: _parent, createdAt, finishedAt, deliveredAt, ...rest } = t;
  return { ...rest, createdAt: createdAt.toISOString(), finishedAt: iso(finishedAt), deliveredAt: iso(deliveredAt) };
}

export async function listTasks(
  db: Queryable,
  conversationId: string,
  opts: { status?: TaskStatus } = {},
): Promise<TaskView[]> {
  return (await listBackgroundTasks(db, conversationId, opts)).map(taskView);
}

/** Why a cancel did nothing: no such task, or it is not running (ended, or its workflow is gone). */
export class TaskCancelError extends Error {
  constructor(
    message: string,
    readonly code: 'not_found' | 'conflict',
  ) {
    super(message);
    this.name = 'TaskCancelError';
  }
}

/** Asks Temporal to cancel a running task's workflow (its subagent's turn ends `cancelled`). */
export async function cancelTask(
  temporal: Client,
  db: Queryable,
  conversationId: string,
  taskId: string,
): Promise<BackgroundTask> {
  const task = await loadBackgroundTask(db, conversationId, taskId);
  if (!task)
    throw new TaskCancelError(`no background task ${JSON.stringify(taskId)} in this conversation`, 'not_found');
  if (task.status !== 'running') throw new TaskCancelError(`task ${task.taskId} is ${task.status} already`, 'conflict');
  try {
    await temporal.workflow.getHandle(task.workflowId).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    throw new TaskCancelError(`task ${task.taskId} has no running workflow`, 'conflict');
  }
  return task;
}
