/**
 * Compactions in Postgres: the plan → summarise → commit hand-over (one row per compaction id),
 * the conversation's calibrated chars-per-token ratio, and the breaker's failure count.
 * Commit appends the batch and marks the row committed in one transaction.
 */
import type { Pool } from 'pg';
import type { Block } from '../core/timeline/block';
import type { Usage } from '../core/model/provider';
import { appendBlocks } from './timeline-store';
import { jsonForPostgres, normaliseText } from '../core/text';

export interface CompactionRow {
  id: string;
  turnId: string;
  status: 'planned' | 'summarized' | 'committed' | 'skipped' | 'failed';
  plan: unknown;
  summary: string | null;
  prefixSummary: string | null;
  usage: Usage | null;
}

export async function loadCompaction(
  pool: Pool,
  conversationId: string,
  id: string,
): Promise<CompactionRow | undefined> {
  const res = await pool.query<{
    id: string;
    turn_id: string;
    status: CompactionRow['status'];
    plan: unknown;
    summary: string | null;
    prefix_summary: string | null;
    usage: Usage | null;
  }>(
    `SELECT id, turn_id, status, plan, summary, prefix_summary, usage FROM compactions WHERE conversation_id = $1 AND id = $2`,
    [conversationId, id],
  );
  const r = res.rows[0];
  return (
    r && {
      id: r.id,
      turnId: r.turn_id,
      status: r.status,
      plan: r.plan,
      summary: r.summary,
      prefixSummary: r.prefix_summary,
      usage: r.usage,
    }
  );
}

/** Records a plan; a plan already recorded under this id wins (retries and replays). */
export async function savePlan(
  pool: Pool,
  conversationId: string,
  id: string,
  turnId: string,
  status: 'planned' | 'skipped',
  plan: unknown,
): Promise<void> {
  await pool.query(
    `INSERT INTO compactions (conversation_id, id, turn_id, status, plan) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (conversation_id, id) DO NOTHING`,
    [conversationId, id, turnId, status, jsonForPostgres(plan)],
  );
}

export async function saveSummaries(
  pool: Pool,
  conversationId: string,
  id: string,
  s: { summary: string; prefixSummary: string | null; usage: Usage },
): Promise<void> {
  await pool.query(
    `UPDATE compactions SET status = 'summarized', summary = $3, prefix_summary = $4, usage = $5
      WHERE conversation_id = $1 AND id = $2 AND status = 'planned'`,
    [
      conversationId,
      id,
      normaliseText(s.summary),
      s.prefixSummary === null ? null : normaliseText(s.prefixSummary),
      JSON.stringify(s.usage),
    ],
  );
}

/** Appends the batch and marks the compaction committed, atomically; resets the breaker. */
export async function commitCompactionBatch(
  pool: Pool,
  conversationId: string,
  id: string,
  batch: Block[],
): Promise<{ inserted: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const inserted = await appendBlocks(client, conversationId, batch);
    await client.query(
      `UPDATE compactions SET status = 'committed', committed_at = now() WHERE conversation_id = $1 AND id = $2`,
      [conversationId, id],
    );
    await client.query(`UPDATE conversations SET compaction_failures = 0 WHERE id = $1`, [conversationId]);
    await client.query('COMMIT');
    return { inserted: inserted.length };
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

/** A compaction that failed or could not reduce the context: counts towards the breaker. */
export async function recordCompactionFailure(
  pool: Pool,
  conversationId: string,
  id: string,
  error: string,
): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `WITH marked AS (
       UPDATE compactions SET status = CASE WHEN status = 'skipped' THEN 'skipped' ELSE 'failed' END, error = $3
        WHERE conversation_id = $1 AND id = $2 AND status <> 'committed' AND error IS NULL RETURNING 1
     )
     UPDATE conversations SET compaction_failures = compaction_failures + (SELECT count(*)::int FROM marked)
      WHERE id = $1 RETURNING compaction_failures AS n`,
    [conversationId, id, error],
  );
  return res.rows[0]?.n ?? 0;
}

export async function compactionFailures(pool: Pool, conversationId: string): Promise<number> {
  const res = await pool.query<{ n: number }>(`SELECT compaction_failures AS n FROM conversations WHERE id = $1`, [
    conversationId,
  ]);
  return res.rows[0]?.n ?? 0;
}

export async function loadCharsPerToken(pool: Pool, conversationId: string): Promise<number | undefined> {
  const res = await pool.query<{ r: number | null }>(`SELECT chars_per_token AS r FROM conversations WHERE id = $1`, [
    conversationId,
  ]);
  return res.rows[0]?.r ?? undefined;
}

/** How many compactions of a conversation ended in each status. */
export async function compactionCounts(pool: Pool, conversationId: string): Promise<Record<string, number>> {
  const res = await pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM compactions WHERE conversation_id = $1 GROUP BY status ORDER BY status`,
    [conversationId],
  );
  return Object.fromEntries(res.rows.map((r) => [r.status, r.n]));
}

/** Planned tokens before and after each committed compaction of a conversation (for benches and reports). */
export async function compactionReductions(
  pool: Pool,
  conversationId: string,
): Promise<Array<{ before: number; after: number }>> {
  const res = await pool.query<{ before: number; after: number }>(
    `SELECT (plan->'cut'->>'tokensBefore')::int AS before, (plan->'cut'->>'tokensAfter')::int AS after
       FROM compactions WHERE conversation_id = $1 AND status = 'committed' ORDER BY created_at`,
    [conversationId],
  );
  return res.rows;
}
