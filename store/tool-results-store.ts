/**
 * Tool results of a concurrent batch: each call's blocks are held until the batch is done, then
 * appended to the timeline in call order (whatever order the calls finished in).
 */
import type { Pool } from 'pg';
import { BlockSchema, type Block } from '../core/timeline/block';
import { appendBlocks } from './timeline-store';
import { jsonForPostgres } from '../core/text';

/** Holds a call's result blocks; the first write wins (a retried tool keeps its first result). */
export async function holdToolResult(
  db: Pool,
  conversationId: string,
  turnId: string,
  callId: string,
  blocks: Block[],
): Promise<void> {
  await db.query(
    `INSERT INTO tool_results_pending (conversation_id, call_id, turn_id, blocks) VALUES ($1, $2, $3, $4::jsonb)
     ON CONFLICT (conversation_id, call_id) DO NOTHING`,
    [conversationId, callId, turnId, jsonForPostgres(blocks)],
  );
}

/** A held result's blocks (the result block last), or undefined. */
export async function heldToolResult(db: Pool, conversationId: string, callId: string): Promise<Block[] | undefined> {
  const res = await db.query<{ blocks: unknown[] }>(
    `SELECT blocks FROM tool_results_pending WHERE conversation_id = $1 AND call_id = $2`,
    [conversationId, callId],
  );
  return res.rows[0]?.blocks.map((b) => BlockSchema.parse(b));
}

/**
 * Appends the held results of `callIds` in that order, in one transaction with their release.
 * Calls without a held result (cancelled before they finished, or already appended) add nothing;
 * returns the call ids whose results were appended now.
 */
export async function appendHeldToolResults(db: Pool, conversationId: string, callIds: string[]): Promise<string[]> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const res = await client.query<{ call_id: string; blocks: unknown[] }>(
      `DELETE FROM tool_results_pending WHERE conversation_id = $1 AND call_id = ANY($2::text[])
       RETURNING call_id, blocks`,
      [conversationId, callIds],
    );
    const held = new Map(res.rows.map((r) => [r.call_id, r.blocks.map((b) => BlockSchema.parse(b))]));
    const ordered = callIds.filter((id) => held.has(id));
    await appendBlocks(
      client,
      conversationId,
      ordered.flatMap((id) => held.get(id)!),
    );
    await client.query('COMMIT');
    return ordered;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}
