/**
 * The retained window of a conversation's stream: the oldest event still stored (older ones were
 * pruned, see `pruneEvents`) and the last offset published. Readers use it to tell a client which
 * offsets it missed.
 */
import type { Queryable } from './db';

export interface StreamWindow {
  /** Offset of the oldest retained event (null: none retained). */
  oldestSeq: number | null;
  /** Offset of the last published event (0: none). */
  lastSeq: number;
}

/** The conversation's stream window, or undefined when the conversation does not exist. */
export async function loadStreamWindow(db: Queryable, conversationId: string): Promise<StreamWindow | undefined> {
  const res = await db.query<{ min: string | null; last: string | null }>(
    `SELECT (SELECT min(seq) FROM stream_events WHERE conversation_id = $1) AS min,
            (SELECT stream_seq FROM conversations WHERE id = $1) AS last`,
    [conversationId],
  );
  const row = res.rows[0];
  if (!row || row.last === null) return undefined;
  return { oldestSeq: row.min === null ? null : Number(row.min), lastSeq: Number(row.last) };
}

/**
 * The offset a reader starts from to see the given (unfinished) turns whole: just before the
 * first retained event of any of them, or the conversation's last offset when none has published
 * yet (a queued turn: its events all come later). Undefined for an unknown conversation.
 */
export async function liveStreamStart(
  db: Queryable,
  conversationId: string,
  turnIds: readonly string[],
): Promise<number | undefined> {
  const res = await db.query<{ first: string | null; last: string | null }>(
    `SELECT (SELECT min(seq) FROM stream_events WHERE conversation_id = $1 AND turn_id = ANY($2::text[])) AS first,
            (SELECT stream_seq FROM conversations WHERE id = $1) AS last`,
    [conversationId, turnIds],
  );
  const row = res.rows[0];
  if (!row || row.last === null) return undefined;
  return row.first === null ? Number(row.last) : Number(row.first) - 1;
}
