/**
 * The `conversations` row: title, prompt-cache touch, stream offset, the round's bookkeeping
 * writes and the sources pool's citation refs (what a decision round reads: store/round-reads.ts).
 */
import type { Queryable } from './db';
import type { Pool } from 'pg';
import type { SourceRow } from '../core/timeline/sources';
import type { SourceRef } from '../core/channels';
import { loadSourcesPool } from './sources-store';
import { normaliseText } from '../core/text';

export interface ConversationRow {
  id: string;
  title: string | null;
  createdAt: Date;
  /** Epoch ms of the last prompt-cache write (null: never). */
  cacheLastTouchAt: number | null;
  cacheTtlSeconds: number | null;
  /** Calibrated characters per token of this conversation's prompts (null: not calibrated yet). */
  charsPerToken: number | null;
  /** Offset of the last published stream event (0: none). */
  streamSeq: number;
}

/** The conversation's row, or undefined when it does not exist. */
export async function loadConversation(db: Queryable, conversationId: string): Promise<ConversationRow | undefined> {
  const res = await db.query<{
    title: string | null;
    created_at: Date;
    cache_last_touch_at: string | null;
    cache_ttl_seconds: number | null;
    chars_per_token: number | null;
    stream_seq: string;
  }>(
    `SELECT title, created_at, cache_last_touch_at, cache_ttl_seconds, chars_per_token, stream_seq
       FROM conversations WHERE id = $1`,
    [conversationId],
  );
  const r = res.rows[0];
  if (!r) return undefined;
  return {
    id: conversationId,
    title: r.title,
    createdAt: r.created_at,
    cacheLastTouchAt: r.cache_last_touch_at === null ? null : Number(r.cache_last_touch_at),
    cacheTtlSeconds: r.cache_ttl_seconds,
    charsPerToken: r.chars_per_token,
    streamSeq: Number(r.stream_seq),
  };
}

/** The conversation's title (null while untitled or when the conversation does not exist). */
export async function loadTitle(db: Queryable, conversationId: string): Promise<string | null> {
  return (await loadConversation(db, conversationId))?.title ?? null;
}

/** Sets the title unless one is set already (the first title wins). True when this call set it. */
export async function setTitleIfUnset(db: Queryable, conversationId: string, title: string): Promise<boolean> {
  const res = await db.query(
    `UPDATE conversations SET title = $2, updated_at = now() WHERE id = $1 AND title IS NULL`,
    [conversationId, normaliseText(title)],
  );
  return res.rowCount === 1;
}

/** The conversation's current stream offset (0 when nothing was published or it does not exist). */
export async function loadStreamSeq(db: Queryable, conversationId: string): Promise<number> {
  return (await loadConversation(db, conversationId))?.streamSeq ?? 0;
}

/**
 * A round's bookkeeping in one statement: the prompt-cache touch (when the render pruned) and the
 * recalibrated chars-per-token ratio (when the provider reported usage). Committed without waiting
 * for the WAL flush: a Postgres crash can only make the next round prune or estimate conservatively.
 */
/** A round's cache touch and calibrated chars per token. */
export interface RoundBookkeeping {
  touch?: { at: number; ttlSeconds: number };
  charsPerToken?: number;
}

export async function saveRoundBookkeeping(
  /** A pool, never a transaction's client: the asynchronous commit must cover this write alone. */
  db: Pool,
  conversationId: string,
  at: RoundBookkeeping,
): Promise<void> {
  if (!at.touch && at.charsPerToken === undefined) return;
  await db.query(
    `UPDATE conversations SET
       cache_last_touch_at = COALESCE($2, cache_last_touch_at),
       cache_ttl_seconds = COALESCE($3, cache_ttl_seconds),
       chars_per_token = COALESCE($4, chars_per_token)
     WHERE id = $1
     RETURNING set_config('synchronous_commit', 'off', true)`,
    [conversationId, at.touch?.at ?? null, at.touch?.ttlSeconds ?? null, at.charsPerToken ?? null],
  );
}

/** The sources pool and its citation refs (for live [[S:n]] resolution in the answer channel). */
export async function loadSourceRefs(
  db: Queryable,
  conversationId: string,
): Promise<{ rows: SourceRow[]; refs: SourceRef[] }> {
  const rows = await loadSourcesPool(db, conversationId);
  return withSourceRefs(rows);
}

/** The pool's rows with their citation refs (what live [[S:n]] resolution needs of each). */
export function withSourceRefs(rows: SourceRow[]): { rows: SourceRow[]; refs: SourceRef[] } {
  return { rows, refs: rows.map((r) => ({ sid: r.sid, title: r.title, url: r.url })) };
}
