/**
 * Retention: removing a conversation from the system of record — its timeline, overlays,
 * artifacts, stream events and the composite canvases kept from them, usage rows, background tasks (their task and answer), turns, compactions, held tool results and the
 * conversation row — in one transaction. Idempotent: purging again removes nothing.
 */
import type { Pool } from 'pg';
import { withTransaction } from './db';

/** Tables holding a conversation's rows, children before the conversation row. */
const TABLES = [
  'feedback',
  'tool_results_pending',
  'block_overlays',
  'timeline_blocks',
  'artifacts',
  'workspace_blobs',
  'memory_entries',
  'stream_events',
  'composite_canvases',
  'usage_ledger',
  'background_tasks',
  'subagent_delegations',
  'compactions',
  'turns',
  'conversations',
] as const;

export type PurgeCounts = Record<(typeof TABLES)[number], number>;

export async function purgeConversationRows(db: Pool, conversationId: string): Promise<PurgeCounts> {
  return withTransaction(db, async (client) => {
    const counts = {} as PurgeCounts;
    for (const table of TABLES) {
      const column = table === 'conversations' ? 'id' : 'conversation_id';
      const res = await client.query(`DELETE FROM ${table} WHERE ${column} = $1`, [conversationId]);
      counts[table] = res.rowCount ?? 0;
    }
    return counts;
  });
}

/** Conversations with no activity (no write, no stream event) since `before`, oldest first. */
export async function inactiveConversations(db: Pool, before: Date, limit = 1000): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM conversations WHERE updated_at < $1 ORDER BY updated_at, id LIMIT $2`,
    [before, limit],
  );
  return res.rows.map((r) => r.id);
}
