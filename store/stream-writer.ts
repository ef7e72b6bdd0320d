/**
 * One writer per database pool for every stream publisher of a process: the batches that
 * publishers hand in during a tick go to Postgres in ONE statement, whatever the number of
 * conversations streaming at once. A worker with hundreds of turns streaming tokens does not
 * drain its pool with stream writes.
 *
 * Group commit: a batch handed in while no statement runs goes at once (no added latency: each
 * publisher throttles itself); batches handed in while a statement runs are collected and go
 * together as soon as it ends — batches grow when Postgres is slower, and the writer holds one
 * connection at most. Per conversation, events keep their order and get consecutive offsets
 * (publishEventBatches). A conversation unknown to the database fails only its own publishers.
 * Adjacent text deltas that queued up together are stored as one event (core/stream/coalesce.ts).
 */
import type { Pool } from 'pg';
import { publishEventBatches, type StreamEventInput } from './stream-bus';
import { coalesceDeltas } from '../core/stream/coalesce';

interface Pending {
  events: StreamEventInput[];
  waiters: Array<{ resolve: () => void; reject: (err: Error) => void }>;
}

export class StreamWriter {
  private pending = new Map<string, Pending>();
  private running: Promise<void> | null = null;

  constructor(private readonly pool: Pool) {}

  /** Resolves when the events are committed (with consecutive offsets, after earlier ones). */
  publish(conversationId: string, events: StreamEventInput[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const p = this.pending.get(conversationId) ?? { events: [], waiters: [] };
      p.events.push(...events);
      p.waiters.push({ resolve, reject });
      this.pending.set(conversationId, p);
      this.schedule();
    });
  }

  private schedule(): void {
    if (!this.running) this.tick();
  }

  private tick(): void {
    const batch = this.pending;
    this.pending = new Map();
    this.running = this.write(batch).finally(() => {
      this.running = null;
      if (this.pending.size > 0) this.schedule();
    });
  }

  private async write(batch: Map<string, Pending>): Promise<void> {
    let written: Set<string>;
    try {
      written = await publishEventBatches(
        this.pool,
        [...batch].map(([conversationId, p]) => ({ conversationId, events: coalesceDeltas(p.events) })),
      );
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const p of batch.values()) for (const w of p.waiters) w.reject(error);
      return;
    }
    for (const [conversationId, p] of batch) {
      const error = written.has(conversationId)
        ? undefined
        : new Error(`stream publish: unknown conversation ${conversationId}`);
      for (const w of p.waiters) {
        if (error) w.reject(error);
        else w.resolve();
      }
    }
  }
}

const writers = new WeakMap<Pool, StreamWriter>();

/** The process's writer for this pool. */
export function streamWriter(pool: Pool): StreamWriter {
  let w = writers.get(pool);
  if (!w) writers.set(pool, (w = new StreamWriter(pool)));
  return w;
}
