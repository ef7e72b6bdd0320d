/** Counts the governance bench reads (bench/governance.ts): waiting approvals, rows of a set of conversations. */
import type { Queryable } from './db';

/** Approval requests recorded (each is a call that waited or waits for a person). */
export async function approvalRequestCount(db: Queryable): Promise<number> {
  const res = await db.query(`SELECT count(*)::int AS n FROM timeline_blocks WHERE type = 'stage.approval.request'`);
  return Number(res.rows[0].n);
}

const TABLES = ['timeline_blocks', 'stream_events', 'usage_ledger', 'turns', 'spend_reservations'] as const;
export type ConversationTable = (typeof TABLES)[number];

/** Rows of `table` that belong to `conversationIds`. */
export async function conversationRows(
  db: Queryable,
  table: ConversationTable,
  conversationIds: readonly string[],
): Promise<number> {
  if (!TABLES.includes(table)) throw new Error(`conversationRows: unknown table ${table}`);
  const res = await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = ANY($1)`, [
    conversationIds,
  ]);
  return Number(res.rows[0].n);
}
