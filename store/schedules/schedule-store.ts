/**
 * Who owns each schedule (migrations/1765100000100_schedules.ts): the gateway and the CLI look a
 * schedule up here before they touch its Temporal Schedule, so another tenant's schedule is
 * unreachable; `managed_queue` marks the ones an agent file declares (reconciled at worker start
 * by the worker on that workflows queue; a user's schedule has none and is never touched by it).
 */
import type { Queryable } from '../db';
import type { ScheduleInput } from '../../core/schedules/spec';

export interface ScheduleRow {
  id: string;
  tenantId: string;
  projectId: string;
  userId: string | null;
  agent: string;
  /** The schedule as given (core/schedules/spec.ts ScheduleInput). */
  definition: ScheduleInput;
  /** The stored conversation id its runs go to (null: a new one each run). */
  conversationId: string | null;
  managedQueue: string | null;
  webhookSecret: string | null;
  createdAt: string;
}

const COLUMNS = `id, tenant_id, project_id, user_id, agent, definition, conversation_id, managed_queue, webhook_secret, created_at`;

const rowOf = (r: Record<string, unknown>): ScheduleRow => ({
  id: r.id as string,
  tenantId: r.tenant_id as string,
  projectId: r.project_id as string,
  userId: (r.user_id as string | null) ?? null,
  agent: r.agent as string,
  definition: r.definition as ScheduleInput,
  conversationId: (r.conversation_id as string | null) ?? null,
  managedQueue: (r.managed_queue as string | null) ?? null,
  webhookSecret: (r.webhook_secret as string | null) ?? null,
  createdAt: (r.created_at as Date).toISOString(),
});

/** Inserts (or, for the same id, brings up to date) a schedule's owner row. */
export async function saveSchedule(db: Queryable, row: Omit<ScheduleRow, 'createdAt'>): Promise<void> {
  await db.query(
    `INSERT INTO schedules (id, tenant_id, project_id, user_id, agent, definition, conversation_id, managed_queue, webhook_secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (id) DO UPDATE SET agent = EXCLUDED.agent, definition = EXCLUDED.definition,
       conversation_id = EXCLUDED.conversation_id, webhook_secret = COALESCE(schedules.webhook_secret, EXCLUDED.webhook_secret)`,
    [
      row.id,
      row.tenantId,
      row.projectId,
      row.userId,
      row.agent,
      JSON.stringify(row.definition),
      row.conversationId,
      row.managedQueue,
      row.webhookSecret,
    ],
  );
}

export async function loadSchedule(db: Queryable, id: string): Promise<ScheduleRow | undefined> {
  const res = await db.query(`SELECT ${COLUMNS} FROM schedules WHERE id = $1`, [id]);
  return res.rows[0] ? rowOf(res.rows[0]) : undefined;
}

/** A project's schedules, oldest first; `userId` given: that user's only. */
export async function listSchedules(
  db: Queryable,
  scope: { tenantId: string; projectId: string; userId?: string | null },
): Promise<ScheduleRow[]> {
  const byUser = scope.userId !== undefined && scope.userId !== null;
  const res = await db.query(
    `SELECT ${COLUMNS} FROM schedules WHERE tenant_id = $1 AND project_id = $2 ${byUser ? 'AND user_id = $3' : ''}
      ORDER BY created_at, id`,
    byUser ? [scope.tenantId, scope.projectId, scope.userId] : [scope.tenantId, scope.projectId],
  );
  return res.rows.map(rowOf);
}

/** The schedules an agent file manages on a workflows queue. */
export async function managedSchedules(db: Queryable, queue: string): Promise<ScheduleRow[]> {
  const res = await db.query(`SELECT ${COLUMNS} FROM schedules WHERE managed_queue = $1 ORDER BY id`, [queue]);
  return res.rows.map(rowOf);
}

/** Records a schedule's paused state in its definition (pause / unpause). */
export async function setSchedulePaused(db: Queryable, id: string, paused: boolean): Promise<void> {
  await db.query(
    `UPDATE schedules SET definition = jsonb_set(definition, '{paused}', to_jsonb($2::boolean)) WHERE id = $1`,
    [id, paused],
  );
}

export async function deleteScheduleRow(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`DELETE FROM schedules WHERE id = $1`, [id]);
  return (res.rowCount ?? 0) > 0;
}
