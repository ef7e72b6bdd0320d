/**
 * Stream bus on Postgres: events carry per-conversation offsets (seq). Publishing notifies
 * `dreact_stream` with only "<conversationId>:<lastSeq>" (NOTIFY payloads must stay < 8000 bytes);
 * readers fetch rows by offset. Where NOTIFY does not deliver (PGlite), readers poll.
 */
import type { Pool, PoolClient } from 'pg';
import { parseStreamEvent, type StreamEvent, type StreamEventBody } from '../core/stream/events';
import { jsonForPostgres } from '../core/text';
import { withTransaction } from './db';
import { keepCompositeCanvases } from './turn-display-store';

export const STREAM_CHANNEL = 'dreact_stream';

/** An event as published: one of the protocol's events (core/stream/events.ts) with its turn and attempt. */
export type StreamEventInput = StreamEventBody & { turnId?: string; attempt?: number };
export type { StreamEvent };

/**
 * Appends events atomically, allocating consecutive offsets, in one statement (one round trip;
 * the conversation row lock that orders concurrent publishers is held only for that statement).
 * Offsets become visible in order: a later offset never commits before an earlier one.
 * Returns the last offset.
 */
export async function publishEvents(pool: Pool, conversationId: string, events: StreamEventInput[]): Promise<number> {
  if (events.length === 0) return -1;
  const rows = events.map(eventRow);
  const res = await pool.query<{ stream_seq: string }>(
    `WITH bump AS (
       UPDATE conversations SET stream_seq = stream_seq + $2, updated_at = now() WHERE id = $1 RETURNING stream_seq
     ), inserted AS (
       INSERT INTO stream_events (conversation_id, seq, turn_id, attempt, kind, channel, instance, payload)
       SELECT $1, bump.stream_seq - $2 + e.ord, e.ev->>'turnId', (e.ev->>'attempt')::int, e.ev->>'kind', e.ev->>'channel', (e.ev->>'instance')::int, e.ev->'payload'
         FROM bump, jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(ev, ord)
       RETURNING 1
     )
     SELECT stream_seq, pg_notify($4, $1 || ':' || stream_seq) FROM bump`,
    [conversationId, events.length, jsonForPostgres(rows), STREAM_CHANNEL],
  );
  const row = res.rows[0];
  if (!row) throw new Error(`publishEvents: unknown conversation ${conversationId}`);
  return Number(row.stream_seq);
}

/**
 * Appends the events of several conversations in one statement: per conversation, consecutive
 * offsets in the given order (the conversation rows are locked in id order, so concurrent writers
 * never deadlock), one NOTIFY each. Returns the conversations whose events were written (an
 * unknown conversation is left out).
 *
 * Committed asynchronously (`synchronous_commit = off` for this transaction only): stream events
 * are live delivery, not the record — the timeline is — so they do not wait for the WAL flush,
 * which was most of a round's stream-write latency. Only a Postgres crash (not a restart) can lose
 * the last few hundred milliseconds of events, together with their offsets; every reader still
 * finds the turn's outcome in the timeline.
 */
export async function publishEventBatches(
  pool: Pool,
  batches: Array<{ conversationId: string; events: StreamEventInput[] }>,
): Promise<Set<string>> {
  const input = batches
    .filter((b) => b.events.length > 0)
    .map((b) => ({ conv: b.conversationId, n: b.events.length, evs: b.events.map(eventRow) }));
  if (input.length === 0) return new Set();
  const res = await pool.query<{ id: string }>(
    `WITH input AS (
       SELECT conv, n, evs FROM jsonb_to_recordset($1::jsonb) AS x(conv text, n int, evs jsonb)
     ), locked AS (
       SELECT c.id FROM conversations c WHERE c.id IN (SELECT conv FROM input) ORDER BY c.id FOR UPDATE
     ), bump AS (
       UPDATE conversations c SET stream_seq = c.stream_seq + i.n, updated_at = now()
         FROM input i WHERE c.id = i.conv AND c.id IN (SELECT id FROM locked)
       RETURNING c.id, c.stream_seq, i.n, i.evs
     ), inserted AS (
       INSERT INTO stream_events (conversation_id, seq, turn_id, attempt, kind, channel, instance, payload)
       SELECT b.id, b.stream_seq - b.n + e.ord, e.ev->>'turnId', (e.ev->>'attempt')::int, e.ev->>'kind', e.ev->>'channel', (e.ev->>'instance')::int, e.ev->'payload'
         FROM bump b, jsonb_array_elements(b.evs) WITH ORDINALITY AS e(ev, ord)
       RETURNING 1
     )
     SELECT id, pg_notify($2, id || ':' || stream_seq), set_config('synchronous_commit', 'off', true) FROM bump`,
    [jsonForPostgres(input), STREAM_CHANNEL],
  );
  return new Set(res.rows.map((r) => r.id));
}

function eventRow(e: StreamEventInput) {
  return {
    turnId: e.turnId ?? null,
    attempt: e.attempt ?? 1,
    kind: e.kind,
    channel: 'channel' in e ? (e.channel ?? null) : null,
    instance: 'instance' in e ? (e.instance ?? null) : null,
    payload: e.payload,
  };
}

/** A stored row as a protocol event: parsed through the schema, so a malformed row is a clear error. */
function rowToEvent(r: Record<string, unknown>): StreamEvent {
  return parseStreamEvent({
    conversationId: r.conversation_id as string,
    seq: Number(r.seq),
    kind: r.kind,
    attempt: r.attempt as number,
    payload: r.payload,
    ts: (r.ts as Date).toISOString(),
    ...(r.turn_id !== null ? { turnId: r.turn_id } : {}),
    ...(r.channel !== null ? { channel: r.channel } : {}),
    ...(r.instance !== null ? { instance: r.instance } : {}),
  });
}

export async function readEvents(
  pool: Pool | PoolClient,
  conversationId: string,
  afterSeq: number,
  limit = 500,
): Promise<StreamEvent[]> {
  const res = await pool.query(
    `SELECT * FROM stream_events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [conversationId, afterSeq, limit],
  );
  return res.rows.map(rowToEvent);
}

/**
 * The offset of the last approval event of `phase` for any of `callIds` in the log (undefined:
 * none): where a call's approval was requested, or whether it was decided.
 */
export async function lastApprovalSeq(
  pool: Pool,
  conversationId: string,
  callIds: readonly string[],
  phase: 'requested' | 'decided',
): Promise<number | undefined> {
  if (callIds.length === 0) return undefined;
  const res = await pool.query<{ seq: string | null }>(
    `SELECT max(seq) AS seq FROM stream_events
      WHERE conversation_id = $1 AND kind = 'approval' AND payload->>'phase' = $2 AND payload->>'callId' = ANY($3)`,
    [conversationId, phase, [...callIds]],
  );
  const seq = res.rows[0]?.seq;
  return seq === null || seq === undefined ? undefined : Number(seq);
}

/**
 * Deletes events older than `maxAgeSeconds`. Returns the number removed. Composite canvases' attribute
 * events are folded into `composite_canvases` first, in the same transaction (store/turn-display-store.ts);
 * pruners of several gateways take turns (a transaction-scoped advisory lock).
 */
export async function pruneEvents(pool: Pool, maxAgeSeconds: number): Promise<number> {
  return withTransaction(pool, async (q) => {
    await q.query(`SELECT pg_advisory_xact_lock(hashtext('dreact.stream-prune'))`);
    // One cutoff for both statements: what is folded is exactly what is deleted.
    const { rows } = await q.query<{ cutoff: Date }>(`SELECT now() - make_interval(secs => $1) AS cutoff`, [
      maxAgeSeconds,
    ]);
    await keepCompositeCanvases(q, rows[0]!.cutoff);
    const res = await q.query(`DELETE FROM stream_events WHERE ts < $1`, [rows[0]!.cutoff]);
    return res.rowCount ?? 0;
  });
}

export interface FollowOptions {
  afterSeq?: number;
  /** Poll interval when no notification arrives (and the only mechanism where NOTIFY is unavailable). */
  pollMs?: number;
  /** Use LISTEN/NOTIFY (default true). */
  listen?: boolean;
  signal?: AbortSignal;
  /**
   * A shared notification source (one LISTEN connection for many readers, see stream-notifier.ts).
   * When given, no per-reader LISTEN connection is taken from the pool.
   */
  notifier?: StreamNotifier;
  /** How a batch is read (default readEvents); the gateway shares one read among readers at the same offset. */
  read?: (conversationId: string, afterSeq: number) => Promise<StreamEvent[]>;
}

/** Wakes readers of a conversation when events were published (delivery is a hint: readers re-read by offset). */
export interface StreamNotifier {
  subscribe(conversationId: string, onPublished: () => void): () => void;
}

/** Parses a NOTIFY payload "<conversationId>:<lastSeq>" (conversation ids may contain ':'). */
export function parseStreamNotice(payload: string | undefined): { conversationId: string; seq: number } | undefined {
  if (!payload) return undefined;
  const at = payload.lastIndexOf(':');
  if (at <= 0) return undefined;
  const seq = Number(payload.slice(at + 1));
  return Number.isInteger(seq) ? { conversationId: payload.slice(0, at), seq } : undefined;
}

/**
 * Follows a conversation's events from an offset: yields every event exactly once, in order.
 * Wakes on NOTIFY when available, else polls. Ends when `signal` aborts.
 */
export async function* followEvents(
  pool: Pool,
  conversationId: string,
  opts: FollowOptions = {},
): AsyncGenerator<StreamEvent> {
  let after = opts.afterSeq ?? 0;
  const pollMs = opts.pollMs ?? 250;
  // `notified` closes the lost-wakeup window: a notice that arrives while a read is in flight
  // (after the read's snapshot, before the reader sleeps) makes the next sleep return at once.
  let notified = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    notified = true;
    wake?.();
  };
  let listener: PoolClient | null = null;
  let unsubscribe: (() => void) | null = null;
  const onNotify = (msg: { channel: string; payload?: string }) => {
    if (msg.channel === STREAM_CHANNEL && parseStreamNotice(msg.payload)?.conversationId === conversationId) poke();
  };
  if (opts.notifier) {
    unsubscribe = opts.notifier.subscribe(conversationId, poke);
  } else if (opts.listen !== false) {
    listener = await pool.connect();
    listener.on('notification', onNotify);
    await listener.query(`LISTEN ${STREAM_CHANNEL}`);
  }
  const onAbort = () => wake?.();
  opts.signal?.addEventListener('abort', onAbort);
  try {
    while (!opts.signal?.aborted) {
      notified = false;
      const batch = await (opts.read ?? ((c, a) => readEvents(pool, c, a)))(conversationId, after);
      for (const e of batch) {
        after = e.seq;
        yield e;
      }
      if (batch.length > 0 || notified) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
        if (notified || opts.signal?.aborted) wake();
      });
      wake = null;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    unsubscribe?.();
    if (listener) {
      listener.off('notification', onNotify);
      await listener
        .query(`UNLISTEN ${STREAM_CHANNEL}`)
        .catch((err: Error) => console.error(`[stream] UNLISTEN failed: ${err.message}`));
      listener.release();
    }
  }
}
