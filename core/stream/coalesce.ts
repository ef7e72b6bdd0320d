/**
 * Coalescing of live text deltas before they are stored: adjacent `delta` events of the same
 * turn, attempt, channel, instance and round become one event with the texts joined. A client
 * sees the same text in the same order, in fewer events.
 *
 * The stream writer applies it to what queued up for a conversation while its previous statement
 * ran, so it costs no latency: with Postgres fast, a batch holds one delta and nothing changes;
 * with Postgres slow (hundreds of turns streaming), rows shrink just when they cost the most.
 * Only plain deltas merge (payload of `text` and `round`); anything else is kept as it is and ends
 * a run of deltas.
 */
import type { StreamEventBody } from './events';

type Meta = { turnId?: string; attempt?: number };
type Delta = Extract<StreamEventBody, { kind: 'delta' }> & Meta;

const isPlainDelta = (e: StreamEventBody & Meta): e is Delta =>
  e.kind === 'delta' && Object.keys(e.payload).every((k) => k === 'text' || k === 'round');

const sameRun = (a: Delta, b: Delta): boolean =>
  a.channel === b.channel &&
  a.instance === b.instance &&
  a.turnId === b.turnId &&
  a.attempt === b.attempt &&
  a.payload.round === b.payload.round;

export function coalesceDeltas<E extends StreamEventBody & Meta>(events: readonly E[]): E[] {
  const out: E[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (last && isPlainDelta(last) && isPlainDelta(e) && sameRun(last, e)) {
      out[out.length - 1] = { ...last, payload: { ...last.payload, text: last.payload.text + e.payload.text } };
    } else {
      out.push(e);
    }
  }
  return out;
}
