/**
 * The gateway under load (`npm run bench -- gateway`): `dreact gateway` runs as its own process
 * (as deployed: Postgres keys, LISTEN/NOTIFY, JSON logs off) against a real Temporal dev server,
 * a worker and Postgres, all on loopback.
 *
 * - requests/s and latency of `GET …/state` (Postgres + a Temporal query) and `GET /v1/conversations`
 *   (a page of 20 of 50 conversations), 16 concurrent clients for a fixed time each;
 * - SSE fan-out: 200 stream clients of one conversation while answer deltas are published at 50/s
 *   (the activities' StreamPublisher → Postgres → NOTIFY → the gateway → 200 loopback responses);
 *   token → client latency p50/p95 (goal p95 ≤ 50 ms), every event exactly once, and the gateway
 *   process's resident memory per open stream.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { percentile } from './stats';
import { residentBytes } from './worker-process';
import { openDb, migrate, dropSchema } from '../store/db';
import { createApiKey } from '../store/tenancy-store';
import { StreamPublisher } from '../store/publisher';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { createWorker } from '../workers/worker';
import { DreactClient } from '../client/api';
import { openSse } from '../client/sse-client';
import { freePort } from '../apps/stack/embedded';

const CONVERSATIONS = 50;
const CLIENTS = 16;
const RUN_MS = 4_000;
const STREAMS = 200;
const DELTAS = 100;
const DELTAS_PER_SECOND = 50;

const rssKb = (pid: number) => residentBytes(pid) / 1024;

export async function benchGateway(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_gateway_${process.pid}`, max: 8 });
  await migrate(db);
  const taskQueue = `bench-gateway-${process.pid}`;
  const worker = await createWorker({
    connection: server.env.nativeConnection,
    namespace: server.namespace,
    db,
    taskQueue,
  });
  const running = worker.run();
  const api = new DreactClient(server.env.client, { taskQueue });
  const owner = { tenantId: 'bench', projectId: 'gw' };
  const { key } = await createApiKey(db.pool, { ...owner, userId: null, scopes: ['read', 'write'] });
  const port = await freePort(18787);
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', 'bin', 'dreact.cjs'), 'gateway', '--port', String(port), '--host', '127.0.0.1'],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: server.address,
        DATABASE_URL: db.databaseUrl,
        DREACT_DB_SCHEMA: db.schema,
        DREACT_TASK_QUEUE: taskQueue,
        DREACT_RATE_LIMIT_PER_MINUTE: String(1e9),
        DREACT_API_KEYS: '',
        DREACT_ALLOW_SCRIPTED: '1', // the bench's turns name the scripted model
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', () => undefined);
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const abort = new AbortController();
  try {
    for (let t = Date.now(); !out.includes('Ready.');) {
      if (Date.now() - t > 60_000 || child.exitCode !== null) throw new Error(`the gateway did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const convs = Array.from({ length: CONVERSATIONS }, (_, i) => `bench_${process.pid}_${i}`);
    const script = {
      model: {
        provider: 'scripted',
        script: {
          rounds: [
            '<channel:ReactDecisionOutV2>```json\n{"action":"complete","notes":"","final_answer":"ok"}\n```</channel:ReactDecisionOutV2>',
          ],
        },
      },
    };
    for (const c of convs) {
      const r = await fetch(`${base}/v1/conversations/${c}/turns`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prompt: 'hello', options: script }),
      });
      if (r.status !== 202) throw new Error(`turn start: ${r.status} ${await r.text()}`);
    }
    // The gateway stores a tenant's ids in its own space (core/tenancy/conversation-space.ts).
    for (const c of convs) await api.result(`${owner.tenantId}~${owner.projectId}~${c}`, 1);

    const figures: Record<string, number | string> = { conversations: CONVERSATIONS, concurrent_clients: CLIENTS };
    for (const [label, path] of [
      ['state', (i: number) => `/v1/conversations/${convs[i % CONVERSATIONS]}/state`],
      ['list', () => '/v1/conversations?limit=20'],
    ] as const) {
      const latencies: number[] = [];
      let errors = 0;
      const end = performance.now() + RUN_MS;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, ci) => {
          for (let i = ci; performance.now() < end; i += CLIENTS) {
            const t0 = performance.now();
            const r = await fetch(`${base}${path(i)}`, { headers });
            await r.arrayBuffer();
            if (r.status !== 200) errors++;
            latencies.push(performance.now() - t0);
          }
        }),
      );
      figures[`${label}_requests_per_s`] = Math.round((latencies.length / RUN_MS) * 1000);
      figures[`${label}_p50_ms`] = percentile(latencies, 50);
      figures[`${label}_p95_ms`] = percentile(latencies, 95);
      figures[`${label}_errors`] = errors;
    }

    // SSE fan-out to 200 clients of one conversation.
    const conv = convs[0]!;
    const state = (await (await fetch(`${base}/v1/conversations/${conv}/state`, { headers })).json()) as {
      streamSeq: number;
    };
    const rssBefore = rssKb(child.pid!);
    const latencies: number[] = [];
    const seen: Array<Set<string>> = [];
    let dupes = 0;
    const readers = Array.from({ length: STREAMS }, async (_, i) => {
      const ids = new Set<string>();
      seen.push(ids);
      const events = await openSse(`${base}/v1/conversations/${conv}/stream?after=${state.streamSeq}`, {
        headers: { 'x-api-key': key },
        signal: abort.signal,
      });
      try {
        for await (const e of events) {
          const now = performance.now();
          const d = JSON.parse(e.data) as { t?: number; last?: boolean };
          if (e.id) {
            if (ids.has(e.id)) dupes++;
            ids.add(e.id);
          }
          if (typeof d.t === 'number') latencies.push(now - d.t);
          if (d.last) return;
        }
      } catch (err) {
        if (!abort.signal.aborted) throw new Error(`stream ${i}: ${(err as Error).message}`);
      }
    });
    await new Promise((r) => setTimeout(r, 1500)); // connected and idle
    const rssOpen = rssKb(child.pid!);
    const publisher = new StreamPublisher(db.pool, `${owner.tenantId}~${owner.projectId}~${conv}`, {
      turnId: 'turn_9',
      attempt: 1,
    });
    const start = performance.now();
    for (let i = 0; i < DELTAS; i++) {
      const wait = start + (i * 1000) / DELTAS_PER_SECOND - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      publisher.emit({
        kind: 'delta',
        channel: 'answer',
        payload: { text: ' tok', round: 1, t: performance.now(), last: i === DELTAS - 1 },
      });
    }
    await publisher.close();
    const deadline = setTimeout(() => abort.abort(), 15_000);
    await Promise.all(readers);
    clearTimeout(deadline);
    const complete = seen.filter((s) => s.size === DELTAS).length;
    const p95 = percentile(latencies, 95);
    Object.assign(figures, {
      sse_clients: STREAMS,
      sse_deltas_per_client: DELTAS,
      sse_clients_with_every_event_once: `${complete}/${STREAMS}${dupes ? ` (${dupes} duplicates)` : ''}`,
      sse_token_to_client_p50_ms: percentile(latencies, 50),
      sse_token_to_client_p95_ms: p95,
      sse_goal_p95_le_50_ms: p95 <= 50 ? 'met' : 'MISSED',
      gateway_rss_idle_mb: Math.round(rssBefore / 102.4) / 10,
      gateway_rss_per_stream_kb: Math.round((rssOpen - rssBefore) / STREAMS),
    });
    return figures;
  } finally {
    abort.abort();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    worker.shutdown();
    await running;
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
