/**
 * What a finished turn showed live that its timeline blocks do not hold, for clients that rebuild
 * the turn after a reload (the web chat): each turn's cost from the usage ledger, and the composite
 * JSON canvases (`attribute` events of the canvas channel) from the stream bus. Read-only.
 *
 * The stream bus is a replay buffer (pruned after its retention, apps/gateway/prune.ts): before
 * the pruner deletes a canvas's attribute events it folds them into `composite_canvases`, and this
 * read starts from those rows, so widgets outlive the stream.
 */
import type { PoolClient } from 'pg';
import type { Queryable } from './db';

/** A conversation's model and exec spend per turn (USD; calls without a price count 0). */
export async function turnCosts(db: Queryable, conversationId: string): Promise<Map<string, number>> {
  const res = await db.query<{ turn_id: string; cost: number }>(
    `SELECT turn_id, coalesce(sum(cost_usd), 0)::float AS cost FROM usage_ledger WHERE conversation_id = $1 GROUP BY turn_id`,
    [conversationId],
  );
  return new Map(res.rows.map((r) => [r.turn_id, r.cost]));
}

/** One composite canvas: its turn, channel instance, and top-level attributes in first-arrival order. */
export interface CompositeCanvas {
  turnId: string;
  instance: number;
  attributes: Array<[string, unknown]>;
}

/** An `attribute` event of the canvas channel as stored on the stream bus. */
export interface AttributeRow {
  seq: number;
  turn_id: string | null;
  instance: number | null;
  payload: Record<string, unknown>;
}

/** A canvas being folded: its attributes so far and the offset of its first one. */
export interface Folding {
  turnId: string;
  instance: number;
  firstSeq: number;
  attrs: Map<string, unknown>;
}

const keyOf = (turnId: string, instance: number) => `${turnId}\u0000${instance}`;

/**
 * Folds attribute events (in stream order) onto canvases already folded, as a live client does: a
 * later value of a key replaces the earlier one in place, a new key goes last, and one marked
 * `first` (react.write's canvas written again) drops the keys before it. Pure.
 */
export function foldAttributes(start: Folding[], rows: AttributeRow[]): Folding[] {
  const byKey = new Map<string, Folding>(
    start.map((c) => [keyOf(c.turnId, c.instance), { ...c, attrs: new Map(c.attrs) }]),
  );
  for (const r of rows) {
    if (r.turn_id === null || typeof r.payload.key !== 'string') continue;
    const instance = r.instance ?? 0;
    const key = keyOf(r.turn_id, instance);
    let c = byKey.get(key);
    if (!c) byKey.set(key, (c = { turnId: r.turn_id, instance, firstSeq: Number(r.seq), attrs: new Map() }));
    // A write's first attribute (a rewrite, a retried round) starts its canvas over.
    if (r.payload.first === true) c.attrs = new Map();
    c.attrs.set(r.payload.key, r.payload.value);
  }
  return [...byKey.values()].sort((a, b) => a.firstSeq - b.firstSeq);
}

/** The canvases the pruner kept (rows of `composite_canvases`), as foldings. */
async function keptCanvases(db: Queryable, conversationId: string): Promise<Folding[]> {
  const res = await db.query<{
    turn_id: string;
    instance: number;
    attributes: Array<[string, unknown]>;
    first_seq: string;
  }>(`SELECT turn_id, instance, attributes, first_seq FROM composite_canvases WHERE conversation_id = $1`, [
    conversationId,
  ]);
  return res.rows.map((r) => ({
    turnId: r.turn_id,
    instance: r.instance,
    firstSeq: Number(r.first_seq),
    attrs: new Map(r.attributes),
  }));
}

/**
 * The composite canvases of a conversation, in stream order: those the pruner kept, then the
 * `attribute` events still on the stream folded on top (a later value of a key replaces the earlier
 * one in place).
 */
export async function compositeCanvases(db: Queryable, conversationId: string): Promise<CompositeCanvas[]> {
  const [kept, res] = await Promise.all([
    keptCanvases(db, conversationId),
    db.query<AttributeRow>(
      `SELECT seq, turn_id, instance, payload FROM stream_events
        WHERE conversation_id = $1 AND kind = 'attribute' AND channel = 'canvas' ORDER BY seq`,
      [conversationId],
    ),
  ]);
  return foldAttributes(kept, res.rows).map((c) => ({
    turnId: c.turnId,
    instance: c.instance,
    attributes: [...c.attrs],
  }));
}

/**
 * Before the stream pruner deletes events older than `cutoff`: folds their canvas attributes
 * into `composite_canvases` (inside the pruner's transaction, so none is lost and none counted
 * twice). Returns the canvases written.
 */
export async function keepCompositeCanvases(q: PoolClient, cutoff: Date): Promise<number> {
  const res = await q.query<AttributeRow & { conversation_id: string }>(
    `SELECT conversation_id, seq, turn_id, instance, payload FROM stream_events
      WHERE kind = 'attribute' AND channel = 'canvas' AND ts < $1
      ORDER BY conversation_id, seq`,
    [cutoff],
  );
  const byConversation = new Map<string, AttributeRow[]>();
  for (const r of res.rows) {
    const list = byConversation.get(r.conversation_id) ?? [];
    list.push(r);
    byConversation.set(r.conversation_id, list);
  }
  let written = 0;
  for (const [conversationId, rows] of byConversation) {
    const touched = new Set(rows.map((r) => keyOf(r.turn_id ?? '', r.instance ?? 0)));
    const folded = foldAttributes(await keptCanvases(q, conversationId), rows);
    for (const c of folded.filter((f) => touched.has(keyOf(f.turnId, f.instance)))) {
      await q.query(
        `INSERT INTO composite_canvases (conversation_id, turn_id, instance, attributes, first_seq)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (conversation_id, turn_id, instance)
           DO UPDATE SET attributes = EXCLUDED.attributes, first_seq = EXCLUDED.first_seq, updated_at = now()`,
        [conversationId, c.turnId, c.instance, JSON.stringify([...c.attrs]), c.firstSeq],
      );
      written++;
    }
  }
  return written;
}
