/**
 * Batches stream events of one activity attempt and publishes them to the Postgres stream bus
 * (through the process's shared writer: one statement at a time, at most one per 10 ms, for all
 * publishers — stream-writer.ts; an awaited flush or close, which an activity waits on, skips the gap).
 * Throttled, leading edge: an event that arrives when the last flush is at least `intervalMs` old
 * is published at once (no added latency for a slow trickle of tokens); events arriving sooner
 * are batched until `intervalMs` after the last flush, or until `maxBatch` are queued. So a
 * publisher hands the writer at most one batch per interval (plus full batches). A failed flush is not
 * swallowed: the error is rethrown by the next emit/flush/close so the activity fails and retries.
 */
import type { Pool } from 'pg';
import type { StreamEventInput } from './stream-bus';
import { streamWriter } from './stream-writer';
import type { StreamEventBody } from '../core/stream/events';

export class StreamPublisher {
  private queue: StreamEventInput[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private lastFlushAt = -Infinity;
  /** Flushes being awaited (a close at the end of an activity): while any is, batches skip the writer's gap. */
  private awaited = 0;

  constructor(
    private readonly pool: Pool,
    private readonly conversationId: string,
    private readonly base: { turnId: string; attempt: number },
    private readonly opts: { intervalMs?: number; maxBatch?: number } = {},
  ) {}

  /** Queues one protocol event (core/stream/events.ts); nothing else can be published. */
  emit(event: StreamEventBody): void {
    if (this.failure) throw this.failure;
    this.queue.push({ ...event, turnId: this.base.turnId, attempt: this.base.attempt });
    if (this.queue.length >= (this.opts.maxBatch ?? 64)) return this.kick();
    if (this.timer) return;
    const wait = this.lastFlushAt + (this.opts.intervalMs ?? 20) - performance.now();
    if (wait <= 0) this.kick();
    else this.timer = setTimeout(() => this.kick(), wait);
  }

  /** Background flush: a failure is recorded (and rethrown by the next emit/flush/close), never left unhandled. */
  private kick(): void {
    this.send().catch(() => undefined);
  }

  /**
   * Publishes what is queued and waits for it. Someone waits, so the writer sends our batches
   * without its gap: those already handed to it (expedite) and those still to go (urgent).
   */
  flush(): Promise<void> {
    this.awaited++;
    streamWriter(this.pool).expedite();
    return this.send().finally(() => this.awaited--);
  }

  private send(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queue.splice(0);
    if (batch.length > 0) {
      this.lastFlushAt = performance.now();
      this.inflight = this.inflight.then(async () => {
        if (this.failure) return;
        try {
          await streamWriter(this.pool).publish(this.conversationId, batch, { urgent: this.awaited > 0 });
        } catch (err) {
          this.failure = err instanceof Error ? err : new Error(String(err));
        }
      });
    }
    return this.inflight.then(() => {
      if (this.failure) throw this.failure;
    });
  }

  close(): Promise<void> {
    return this.flush();
  }
}
