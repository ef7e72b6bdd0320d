/**
 * What a finished turn showed live that its timeline blocks do not hold, for clients that rebuild
 * the turn after a reload (the web chat): each turn's cost from the usage ledger, and the composite
 * JSON canvases (`attribute` events of the canvas channel) from the stream bus. Read-only.
 *
 * The stream bus is a replay buffer (pruned after its retention, client/gateway/prune.ts): a
 * composite canvas older than that is gone from both the stream and this read.
 */
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

/**
 * The composite canvases of a conversation, folded from its stored `attribute` events as a live
 * client folds them (a later value of a key replaces the earlier one in place), in stream order.
 */
export async function compositeCanvases(db: Queryable, conversationId: string): Promise<CompositeCanvas[]> {
  const res = await db.query<{ turn_id: string | null; instance: number | null; payload: Record<string, unknown> }>(
    `SELECT turn_id, instance, payload FROM stream_events
      WHERE conversation_id = $1 AND kind = 'attribute' AND channel = 'canvas' ORDER BY seq`,
    [conversationId],
  );
  const byKey = new Map<string, { turnId: string; instance: number; attrs: Map<string, unknown> }>();
  for (const r of res.rows) {
    if (r.turn_id === null || typeof r.payload.key !== 'string') continue;
    const instance = r.instance ?? 0;
    const key = `${r.turn_id}\u0000${instance}`;
    let c = byKey.get(key);
    if (!c) byKey.set(key, (c = { turnId: r.turn_id, instance, attrs: new Map() }));
    c.attrs.set(r.payload.key, r.payload.value);
  }
  return [...byKey.values()].map((c) => ({ turnId: c.turnId, instance: c.instance, attributes: [...c.attrs] }));
}
