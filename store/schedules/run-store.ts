/**
 * One row per schedule run (`schedule_runs`, keyed by the run's workflow id so a retried activity
 * writes the same row): the conversation and turn it started, how it ended, or why a cap refused it.
 */
import type { Queryable } from '../db';
import type { RunOutcome } from '../../core/schedules/spec';

export interface ScheduleRunRow {
  runWorkflowId: string;
  scheduleId: string;
  conversationId: string | null;
  turnIndex: number | null;
  turnId: string | null;
  outcome: RunOutcome;
  refusedReason: string | null;
  completionPath: string | null;
  delivery: string | null;
  startedAt: string;
  endedAt: string | null;
}

export interface RunStart {
  runWorkflowId: string;
  scheduleId: string;
  conversationId: string | null;
  turnIndex?: number;
  turnId?: string;
  outcome: 'running' | 'refused';
  refusedReason?: string;
}

/** Records a run's start (or its refusal); the same run again changes nothing. */
export async function recordRunStart(db: Queryable, r: RunStart): Promise<void> {
  await db.query(
    `INSERT INTO schedule_runs (run_workflow_id, schedule_id, conversation_id, turn_index, turn_id, outcome, refused_reason, ended_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $6 = 'refused' THEN now() END)
     ON CONFLICT (run_workflow_id) DO NOTHING`,
    [
      r.runWorkflowId,
      r.scheduleId,
      r.conversationId,
      r.turnIndex ?? null,
      r.turnId ?? null,
      r.outcome,
      r.refusedReason ?? null,
    ],
  );
}

/** Records how a run's turn ended (first end wins). */
export async function recordRunEnd(
  db: Queryable,
  runWorkflowId: string,
  end: { outcome: Exclude<RunOutcome, 'running' | 'refused'>; completionPath?: string },
): Promise<void> {
  await db.query(
    `UPDATE schedule_runs SET outcome = $2, completion_path = $3, ended_at = now()
      WHERE run_workflow_id = $1 AND outcome = 'running'`,
    [runWorkflowId, end.outcome, end.completionPath ?? null],
  );
}

/** Records what the webhook delivery did (`delivered 200`, `refused: …`). */
export async function recordRunDelivery(db: Queryable, runWorkflowId: string, delivery: string): Promise<void> {
  await db.query(`UPDATE schedule_runs SET delivery = $2 WHERE run_workflow_id = $1`, [runWorkflowId, delivery]);
}

/** A schedule's latest runs, newest first. */
export async function listRuns(db: Queryable, scheduleId: string, limit = 20): Promise<ScheduleRunRow[]> {
  const res = await db.query(
    `SELECT * FROM schedule_runs WHERE schedule_id = $1 ORDER BY started_at DESC, run_workflow_id DESC LIMIT $2`,
    [scheduleId, limit],
  );
  return res.rows.map((r) => ({
    runWorkflowId: r.run_workflow_id,
    scheduleId: r.schedule_id,
    conversationId: r.conversation_id,
    turnIndex: r.turn_index,
    turnId: r.turn_id,
    outcome: r.outcome,
    refusedReason: r.refused_reason,
    completionPath: r.completion_path,
    delivery: r.delivery,
    startedAt: (r.started_at as Date).toISOString(),
    endedAt: r.ended_at ? (r.ended_at as Date).toISOString() : null,
  }));
}

/** What a schedule's turns spent today (UTC, the usage ledger). */
export async function scheduleSpentToday(db: Queryable, scheduleId: string): Promise<number> {
  const res = await db.query<{ spent: number }>(
    `SELECT coalesce(sum(l.cost_usd), 0)::float AS spent FROM schedule_runs r
       JOIN usage_ledger l ON l.conversation_id = r.conversation_id AND l.turn_id = r.turn_id
      WHERE r.schedule_id = $1 AND l.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
    [scheduleId],
  );
  return res.rows[0]!.spent;
}
