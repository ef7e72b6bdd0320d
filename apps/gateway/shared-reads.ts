/**
 * SSE fan-out: when an event is published, every stream of that conversation wakes at once and
 * would read the same rows — 200 clients, 200 identical queries per batch. Readers at the same
 * offset share one read instead. A read is shared only within one notification generation: a
 * reader woken by a newer notification never joins a read that started before it (that snapshot
 * could predate the new rows), so sharing never delays an event.
 */
import type { Pool } from 'pg';
import { readEvents, type StreamEvent, type StreamNotifier } from '../../store/stream-bus';

export interface SharedReads {
  /** The notifier to give readers (bumps the conversation's generation before waking them). */
  notifier?: StreamNotifier;
  read(conversationId: string, afterSeq: number): Promise<StreamEvent[]>;
  /** Reads issued to Postgres (diagnostics, tests). */
  queries(): number;
}

export function sharedReads(pool: Pool, notifier?: StreamNotifier): SharedReads {
  const generation = new Map<string, number>();
  const inflight = new Map<string, Promise<StreamEvent[]>>();
  let issued = 0;
  return {
    ...(notifier
      ? {
          notifier: {
            subscribe: (conversationId, onPublished) =>
              notifier.subscribe(conversationId, () => {
                generation.set(conversationId, (generation.get(conversationId) ?? 0) + 1);
                onPublished();
              }),
          },
        }
      : {}),
    read(conversationId, afterSeq) {
      const key = `${conversationId}\u0000${afterSeq}\u0000${generation.get(conversationId) ?? 0}`;
      let pending = inflight.get(key);
      if (!pending) {
        issued++;
        pending = readEvents(pool, conversationId, afterSeq).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
    queries: () => issued,
  };
}
