/**
 * Token → SSE client latency through Postgres: StreamPublisher (the activities' batching, 20 ms)
 * → the shared writer (one statement per 10 ms at most) → row insert + NOTIFY → the gateway's
 * shared LISTEN notifier → readEvents → SSE over loopback HTTP → a fetch-based SSE reader. Several conversations stream answer deltas
 * at a model-like rate at once; each delta carries its emit time (same process, performance.now),
 * and latency is measured when the client parses it. Also checks that every event arrived once.
 * Run: node --import tsx bench/stream.ts (or npm run bench -- stream once bench/run.ts lists it).
 * Figures are wall-clock: on a loaded host (see the load figure) CPU scheduling dominates.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { dropSchema, migrate, openDb } from '../store/db';
import { StreamPublisher } from '../store/publisher';
import { publishEvents } from '../store/stream-bus';
import { ensureConversation } from '../store/timeline-store';
import { streamWriteStats } from '../store/storage-stats';
import type { DreactClient } from '../client/api';
import { startGateway } from '../apps/gateway/server';
import { openSse } from '../client/sse-client';

const CONVERSATIONS = 4;
const TOKENS_PER_SECOND = 80;
const DURATION_MS = 2500;
const KEY = 'bench-key';
const REPLAY_EVENTS = 5000;

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
const round1 = (x: number) => Math.round(x * 10) / 10;

/** The stream route never touches Temporal: any other use is a bench bug. */
const noTemporal = new Proxy(
  {},
  {
    get(_t, prop) {
      throw new Error(`bench/stream: the gateway used the Temporal client (${String(prop)})`);
    },
  },
) as DreactClient;

export async function benchStream(): Promise<Record<string, number | string>> {
  const db = openDb({ schema: `bench_stream_${process.pid}`, max: 16 });
  await migrate(db);
  const gw = await startGateway({
    client: noTemporal,
    pool: db.pool,
    apiKeys: [KEY],
    port: 0,
    host: '127.0.0.1',
    pollMs: 250,
    log: () => undefined,
  });
  const latencies: number[] = [];
  /** Split at the transaction timestamp (Postgres now(), same host clock, ms resolution). */
  const toDb: number[] = [];
  const fromDb: number[] = [];
  const received = new Map<string, number[]>();
  const abort = new AbortController();
  try {
    const convs = Array.from({ length: CONVERSATIONS }, (_, i) => `bench_${process.pid}_${i}`);
    for (const c of convs) await ensureConversation(db.pool, c);
    const readers = convs.map(async (c) => {
      const ids: number[] = [];
      received.set(c, ids);
      const events = await openSse(`${gw.url}/v1/conversations/${c}/stream?after=0`, {
        headers: { 'x-api-key': KEY },
        signal: abort.signal,
      });
      try {
        for await (const e of events) {
          const now = performance.now();
          const wall = Date.now();
          const d = JSON.parse(e.data) as { t?: number; w?: number; ts?: string; last?: boolean };
          if (e.id) ids.push(Number(e.id));
          if (typeof d.t === 'number') latencies.push(now - d.t);
          if (typeof d.w === 'number' && d.ts) {
            toDb.push(Date.parse(d.ts) - d.w);
            fromDb.push(wall - Date.parse(d.ts));
          }
          if (d.last) return;
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
    });
    await new Promise((r) => setTimeout(r, 100)); // readers connected and waiting
    const perConv = Math.round((TOKENS_PER_SECOND * DURATION_MS) / 1000);
    const t0 = performance.now();
    await Promise.all(
      convs.map(async (c, ci) => {
        const publisher = new StreamPublisher(db.pool, c, { turnId: 'turn_1', attempt: 1 });
        const start = performance.now() + (ci * 1000) / TOKENS_PER_SECOND / CONVERSATIONS; // stagger the streams
        for (let i = 0; i < perConv; i++) {
          const due = start + (i * 1000) / TOKENS_PER_SECOND;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          publisher.emit({
            kind: 'delta',
            channel: 'answer',
            payload: { text: ' tok', round: 1, t: performance.now(), w: Date.now(), last: i === perConv - 1 },
          });
        }
        await publisher.close();
      }),
    );
    const publishMs = performance.now() - t0;
    const deadline = setTimeout(() => abort.abort(), 5000);
    await Promise.all(readers);
    clearTimeout(deadline);
    const expected = perConv * CONVERSATIONS;
    let lost = 0;
    let duplicated = 0;
    for (const ids of received.values()) {
      duplicated += ids.length - new Set(ids).size;
      lost += perConv - new Set(ids).size;
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const p95 = percentile(sorted, 95);
    const split = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `p50 ${percentile(s, 50)} / p95 ${percentile(s, 95)}`;
    };
    const writes = await streamWriteStats(db.pool, convs);
    const replay = await replayFigures(db.pool, gw.url);
    return {
      conversations: CONVERSATIONS,
      'tokens/s per conversation': TOKENS_PER_SECOND,
      'events published': expected,
      'publish wall time (ms)': Math.round(publishMs),
      'events lost': lost,
      'write statements / rows (the shared writer: one statement per 10 ms at most; adjacent deltas coalesce)': `${writes.statements} / ${writes.rows}`,
      'events duplicated': duplicated,
      'token → SSE p50 (ms)': round1(percentile(sorted, 50)),
      'token → SSE p95 (ms)': round1(p95),
      'token → SSE p99 (ms)': round1(percentile(sorted, 99)),
      'token → SSE max (ms)': round1(sorted.at(-1) ?? NaN),
      'goal p95 ≤ 50 ms': p95 <= 50 ? 'met' : 'MISSED',
      'emit → Postgres transaction (ms)': split(toDb),
      'Postgres transaction → SSE client (ms)': split(fromDb),
      ...replay,
      'host load average (1 min) / CPUs': `${loadavg()[0]!.toFixed(1)} / ${cpus().length}`,
    };
  } finally {
    abort.abort();
    await gw.close();
    await dropSchema(db);
    await db.close();
  }
}

/** A reader that resumes from offset 0 behind a backlog: how fast the gateway replays it. */
async function replayFigures(pool: Pool, url: string): Promise<Record<string, number>> {
  const conv = `bench_${process.pid}_replay`;
  await ensureConversation(pool, conv);
  for (let i = 0; i < REPLAY_EVENTS; i += 250) {
    await publishEvents(
      pool,
      conv,
      Array.from({ length: Math.min(250, REPLAY_EVENTS - i) }, (_, k) => ({
        kind: 'delta',
        channel: 'answer',
        payload: { text: `token ${i + k}` },
      })),
    );
  }
  const t0 = performance.now();
  let n = 0;
  for await (const e of await openSse(`${url}/v1/conversations/${conv}/stream?after=0`, {
    headers: { 'x-api-key': KEY },
    signal: AbortSignal.timeout(30_000),
  })) {
    if (e.id && ++n === REPLAY_EVENTS) break;
  }
  const ms = performance.now() - t0;
  return {
    [`replay of ${REPLAY_EVENTS} events (ms)`]: Math.round(ms),
    'replay events/s': Math.round((REPLAY_EVENTS / ms) * 1000),
  };
}

if (require.main === module) {
  benchStream().then(
    (figures) => {
      for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(32)} ${v}`);
    },
    (err) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exit(1);
    },
  );
}
