/**
 * Periodic pruning of old stream events (the stream bus is a replay buffer, not the record: the
 * timeline is). Runs once at start, then every `intervalMs`; failures are logged, never thrown,
 * and the next run tries again.
 */
import type { Pool } from 'pg';
import { pruneEvents } from '../../store/stream-bus';

export const DEFAULT_STREAM_RETENTION_SECONDS = 7 * 24 * 3600;

export interface StreamPruner {
  /** Runs one prune now (also what the timer runs). Resolves to the number of events removed. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** Default interval: a tenth of the retention, between 1 s and 1 h. */
export function pruneIntervalMs(retentionSeconds: number): number {
  return Math.min(3600_000, Math.max(1000, Math.round((retentionSeconds * 1000) / 10)));
}

export function startStreamPruner(
  pool: Pool,
  opts: { retentionSeconds: number; intervalMs?: number; log?: (line: string) => void },
): StreamPruner {
  if (!Number.isFinite(opts.retentionSeconds) || opts.retentionSeconds <= 0)
    throw new Error(`stream retention must be a positive number of seconds, got ${opts.retentionSeconds}`);
  const log = opts.log ?? ((line: string) => console.error(line));
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;
  const runOnce = () => {
    running = running.then(async () => {
      if (stopped) return 0;
      try {
        const n = await pruneEvents(pool, opts.retentionSeconds);
        if (n > 0) log(`[gateway] pruned ${n} stream events older than ${opts.retentionSeconds} s`);
        return n;
      } catch (err) {
        log(`[gateway] stream prune failed (retried next interval): ${(err as Error).message}`);
        return 0;
      }
    });
    return running;
  };
  void runOnce();
  const timer = setInterval(() => void runOnce(), opts.intervalMs ?? pruneIntervalMs(opts.retentionSeconds));
  timer.unref();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
      stopped = true;
    },
  };
}
