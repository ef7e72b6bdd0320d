/**
 * One writer per database pool for every stream publisher of a process: the batches that
 * publishers hand in during a tick go to Postgres in ONE statement, whatever the number of
 * conversations streaming at once. A worker with hundreds of turns streaming tokens does not
 * drain its pool with stream writes.
 *
 * Group commit: a batch handed in while the writer is idle goes at once (no added latency: each
 * publisher throttles itself); batches handed in while a statement runs, or within `minGapMs`
 * (10 ms) of the last statement's start, are collected and go together — so the writer runs at
 * most one statement per 10 ms however many conversations stream (100 streaming turns at 50
 * deltas/s each would otherwise keep it running back-to-back statements: each one a socket write
 * on the worker's main thread and a transaction in Postgres), batches grow when Postgres is
 * slower, and the writer holds one connection at most. The gap adds at most 10 ms to a token's
 * way to the client, and only while other conversations stream too. A batch its publisher waits
 * for (the flush when an activity closes its stream) skips the gap — it goes at once, or right
 * after the statement running — so the gap never lengthens a round: a zero-latency decide ran
 * 18 ms with the gap on its closing flush, 11 ms without. Per conversation, events keep their
 * order and get consecutive offsets (publishEventBatches). A conversation unknown to the database
 * fails only its own publishers. Adjacent text deltas that queued up together are stored as one
 * event (core/stream/coalesce.ts).
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
  private waiting: NodeJS.Timeout | null = null;
  private lastStart = -Infinity;
  /** A batch someone waits on is pending: it goes without the gap (right after a running statement). */
  private urgent = false;

  constructor(
    private readonly pool: Pool,
    private readonly minGapMs = 10,
  ) {}

  /**
   * Resolves when the events are committed (with consecutive offsets, after earlier ones).
   * `urgent`: the caller waits for this (an activity closing its stream) — it skips the gap.
   */
  publish(conversationId: string, events: StreamEventInput[], opts: { urgent?: boolean } = {}): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const p = this.pending.get(conversationId) ?? { events: [], waiters: [] };
      p.events.push(...events);
      p.waiters.push({ resolve, reject });
      this.pending.set(conversationId, p);
      if (opts.urgent) this.urgent = true;
      this.schedule();
    });
  }

  /** Someone waits for what is pending: it goes without the gap (at once, or right after the running statement). */
  expedite(): void {
    if (this.pending.size === 0) return;
    this.urgent = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.running) return; // its end schedules what is pending
    const wait = this.urgent ? 0 : this.lastStart + this.minGapMs - performance.now();
    if (wait <= 0) {
      if (this.waiting) clearTimeout(this.waiting);
      this.waiting = null;
      return this.tick();
    }
    if (this.waiting) return;
    this.waiting = setTimeout(() => {
      this.waiting = null;
      this.tick();
    }, wait);
  }

  private tick(): void {
    this.lastStart = performance.now();
    this.urgent = false;
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

/** The process's writer for this pool (its gap from DREACT_STREAM_WRITE_GAP_MS, default 10). */
export function streamWriter(pool: Pool): StreamWriter {
  let w = writers.get(pool);
  if (!w) writers.set(pool, (w = new StreamWriter(pool, streamWriteGapMs())));
  return w;
}

/** DREACT_STREAM_WRITE_GAP_MS: the writer's minimum gap between statements (0: none), 0–1000 ms. */
export function streamWriteGapMs(raw = process.env.DREACT_STREAM_WRITE_GAP_MS): number {
  if (raw === undefined || raw.trim() === '') return 10;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 1000)
    throw new Error(`DREACT_STREAM_WRITE_GAP_MS must be an integer from 0 to 1000 (ms), got ${JSON.stringify(raw)}`);
  return n;
}
