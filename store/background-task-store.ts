/**
 * Background tasks (core/agents/background.ts, migrations/1765100000300_background-tasks.ts): the
 * delegate calls of a conversation that run in the background. Opened before the task's workflow
 * starts (idempotent: a retry keeps the first row), closed once by the workflow when its subagent's
 * turn ended, marked delivered once its answer was handed to the parent conversation.
 */
import type { Queryable } from './db';
import type { OnResult, TaskStatus } from '../core/agents/background';

export interface BackgroundTask {
  conversationId: string;
  taskId: string;
  callId: string;
  turnId: string;
  agent: string;
  task: string;
  childConversationId: string;
  workflowId: string;
  onResult: OnResult;
  status: TaskStatus;
  answer: string | null;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  deliveredAt: Date | null;
}

export type OpenTask = Pick<
  BackgroundTask,
  | 'conversationId'
  | 'taskId'
  | 'callId'
  | 'turnId'
  | 'agent'
  | 'task'
  | 'childConversationId'
  | 'workflowId'
  | 'onResult'
>;

export async function openBackgroundTask(db: Queryable, t: OpenTask): Promise<void> {
  await db.query(
    `INSERT INTO background_tasks
       (conversation_id, task_id, call_id, turn_id, agent_name, task, child_conversation_id, workflow_id, on_result)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (conversation_id, task_id) DO NOTHING`,
    [t.conversationId, t.taskId, t.callId, t.turnId, t.agent, t.task, t.childConversationId, t.workflowId, t.onResult],
  );
}

const COLUMNS = `conversation_id, task_id, call_id, turn_id, agent_name, task, child_conversation_id, workflow_id,
  on_result, status, answer, error, created_at, finished_at, delivered_at`;

type Row = {
  conversation_id: string;
  task_id: string;
  call_id: string;
  turn_id: string;
  agent_name: string;
  task: string;
  child_conversation_id: string;
  workflow_id: string;
  on_result: OnResult;
  status: TaskStatus;
  answer: string | null;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
  delivered_at: Date | null;
};

const taskOf = (r: Row): BackgroundTask => ({
  conversationId: r.conversation_id,
  taskId: r.task_id,
  callId: r.call_id,
  turnId: r.turn_id,
  agent: r.agent_name,
  task: r.task,
  childConversationId: r.child_conversation_id,
  workflowId: r.workflow_id,
  onResult: r.on_result,
  status: r.status,
  answer: r.answer,
  error: r.error,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  deliveredAt: r.delivered_at,
});

async function findTask(db: Queryable, conversationId: string, by: 'call_id' | 'task_id', value: string) {
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM background_tasks WHERE conversation_id = $1 AND ${by} = $2`, [
    conversationId,
    value,
  ]);
  return res.rows[0] ? taskOf(res.rows[0]) : undefined;
}

/** The task a delegate call started (undefined: the call waited, or never ran). */
export const backgroundTaskOfCall = (db: Queryable, conversationId: string, callId: string) =>
  findTask(db, conversationId, 'call_id', callId);

export const loadBackgroundTask = (db: Queryable, conversationId: string, taskId: string) =>
  findTask(db, conversationId, 'task_id', taskId);

/** A conversation's tasks, oldest first (at most `limit`). */
export async function listBackgroundTasks(
  db: Queryable,
  conversationId: string,
  opts: { status?: TaskStatus; limit?: number } = {},
): Promise<BackgroundTask[]> {
  const res = await db.query<Row>(
    `SELECT ${COLUMNS} FROM background_tasks WHERE conversation_id = $1 AND ($2::text IS NULL OR status = $2)
      ORDER BY created_at, task_id LIMIT $3`,
    [conversationId, opts.status ?? null, opts.limit ?? 100],
  );
  return res.rows.map(taskOf);
}

/** Closes a task with its outcome (the first close wins: a retry changes nothing). */
export async function finishBackgroundTask(
  db: Queryable,
  conversationId: string,
  taskId: string,
  outcome: { status: Exclude<TaskStatus, 'running'>; answer?: string | null; error?: string | null },
): Promise<void> {
  await db.query(
    `UPDATE background_tasks SET status = $3, answer = $4, error = $5, finished_at = now()
      WHERE conversation_id = $1 AND task_id = $2 AND status = 'running'`,
    [conversationId, taskId, outcome.status, outcome.answer ?? null, outcome.error ?? null],
  );
}

/** Marks a task's answer as handed to the parent conversation. */
export async function markBackgroundTaskDelivered(
  db: Queryable,
  conversationId: string,
  taskId: string,
): Promise<void> {
  await db.query(
    `UPDATE background_tasks SET delivered_at = coalesce(delivered_at, now()) WHERE conversation_id = $1 AND task_id = $2`,
    [conversationId, taskId],
  );
}
