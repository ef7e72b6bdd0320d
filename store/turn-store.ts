/**
 * The turns table: one row per turn, opened when the turn loads its context and closed when it
 * persists (completed) or fails. Every write is idempotent.
 */
import type { Queryable } from './db';
import type { TurnSummary } from '../core/turn/activity-contracts';
import { normaliseText } from '../core/text';

/** `queued`: running, but waiting for a slot under its tenant's turn limit (store/turn-slots.ts). */
export type TurnRowStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface TurnRow {
  turnIndex: number;
  turnId: string;
  workflowId: string;
  status: TurnRowStatus;
  completionPath: string | null;
  rounds: number | null;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  /** The agent the turn ran under and its version (null for turns from before agent definitions). */
  agentName: string | null;
  agentHash: string | null;
  /** The turn's model usage as recorded when it completed (null while running or failed). */
  usage: Record<string, unknown> | null;
  /** While `queued`: the turn's place in its tenant's queue now (1 = next). */
  queuePosition?: number;
}

export async function openTurn(
  db: Queryable,
  t: {
    conversationId: string;
    turnIndex: number;
    turnId: string;
    workflowId: string;
    agent?: { name: string; hash: string };
  },
): Promise<void> {
  await db.query(
    `INSERT INTO turns (conversation_id, turn_index, turn_id, workflow_id, agent_name, agent_hash) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (conversation_id, turn_index) DO NOTHING`,
    [t.conversationId, t.turnIndex, t.turnId, t.workflowId, t.agent?.name ?? null, t.agent?.hash ?? null],
  );
}

export async function completeTurn(db: Queryable, s: TurnSummary): Promise<void> {
  await db.query(
    `UPDATE turns SET status = 'completed', answer = $3, completion_path = $4, rounds = $5, usage = $6, error = NULL, finished_at = now()
      WHERE conversation_id = $1 AND turn_index = $2`,
    [s.conversationId, s.turnIndex, normaliseText(s.answer), s.completionPath, s.rounds, JSON.stringify(s.usage)],
  );
}

/**
 * Marks a turn failed with its error. A turn that already completed stays completed; the row is
 * created when the turn failed before it could open it (e.g. its first activity never ran).
 */
export async function failTurn(
  db: Queryable,
  t: { conversationId: string; turnIndex: number; turnId: string; workflowId: string; error: string },
): Promise<void> {
  await db.query(
    `INSERT INTO turns (conversation_id, turn_index, turn_id, workflow_id, status, error, finished_at)
     VALUES ($1, $2, $3, $4, 'failed', $5, now())
     ON CONFLICT (conversation_id, turn_index) DO UPDATE
       SET status = 'failed', error = EXCLUDED.error, finished_at = now()
       WHERE turns.status <> 'completed'`,
    [t.conversationId, t.turnIndex, t.turnId, t.workflowId, normaliseText(t.error)],
  );
}

/** The conversation's turns, oldest first. */
export async function listTurns(db: Queryable, conversationId: string): Promise<TurnRow[]> {
  const res = await db.query<{
    turn_index: number;
    turn_id: string;
    workflow_id: string;
    status: TurnRowStatus;
    completion_path: string | null;
    rounds: number | null;
    error: string | null;
    started_at: Date;
    finished_at: Date | null;
    agent_name: string | null;
    agent_hash: string | null;
    usage: Record<string, unknown> | null;
    queue_position: string | null;
  }>(
    `SELECT t.turn_index, t.turn_id, t.workflow_id, t.status, t.completion_path, t.rounds, t.error, t.started_at,
            t.finished_at, t.agent_name, t.agent_hash, t.usage,
            CASE WHEN s.workflow_id IS NOT NULL THEN (SELECT count(*) FROM turn_slots o
              WHERE o.tenant_id = s.tenant_id AND NOT o.granted AND o.seq <= s.seq) END AS queue_position
       FROM turns t LEFT JOIN turn_slots s ON s.workflow_id = t.workflow_id AND NOT s.granted
      WHERE t.conversation_id = $1 ORDER BY t.turn_index`,
    [conversationId],
  );
  return res.rows.map((r) => ({
    turnIndex: r.turn_index,
    turnId: r.turn_id,
    workflowId: r.workflow_id,
    status: r.status === 'running' && r.queue_position !== null ? 'queued' : r.status,
    ...(r.status === 'running' && r.queue_position !== null ? { queuePosition: Number(r.queue_position) } : {}),
    completionPath: r.completion_path,
    rounds: r.rounds,
    error: r.error,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at ? r.finished_at.toISOString() : null,
    agentName: r.agent_name,
    agentHash: r.agent_hash,
    usage: r.usage ?? null,
  }));
}

/** When the turn started, for stream latency figures; undefined for an unknown turn. */
export async function turnStartedAt(db: Queryable, conversationId: string, turnId: string): Promise<Date | undefined> {
  const res = await db.query<{ started_at: Date }>(
    `SELECT started_at FROM turns WHERE conversation_id = $1 AND turn_id = $2`,
    [conversationId, turnId],
  );
  return res.rows[0]?.started_at;
}
