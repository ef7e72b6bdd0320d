/**
 * The embedded stack's two databases side by side (`npm run bench -- embedded`): the embedded
 * Postgres server (default) and PGlite (DREACT_EMBEDDED_DB=pglite). For each: first start (a new
 * data directory: initialise, start, migrate), warm start (the same directory again), disk used
 * after migrating, the delivery latency of a published stream event to a LISTEN reader (the
 * live-stream path: publishEvents → NOTIFY → startStreamNotifier), and the demo's wall time
 * (`npm run demo` in a fresh DREACT_HOME, so including its first start and the Temporal dev
 * server's). The round time is `npm run bench -- turn` (embedded.*).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDb } from '../store/db';
import { publishEvents } from '../store/stream-bus';
import { startStreamNotifier } from '../store/stream-notifier';
import { ensureConversation } from '../store/timeline-store';
import { startEmbeddedPostgres } from '../apps/stack/embedded-postgres';
import { startPglite } from '../apps/stack/pglite';
import type { EmbeddedDb } from '../apps/stack/embedded';

const NOTICES = 30;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2 : NaN;
};

function start(kind: EmbeddedDb, home: string) {
  return kind === 'pglite'
    ? startPglite(home, () => undefined)
    : startEmbeddedPostgres({ dataDir: join(home, 'postgres'), port: 0, log: () => undefined });
}

/** Start + migrate, in ms. */
async function timedStart(kind: EmbeddedDb, home: string): Promise<{ ms: number; url: string; stop(): Promise<void> }> {
  const t0 = performance.now();
  const server = await start(kind, home);
  const db = openDb({ databaseUrl: server.url, max: 2 });
  await migrate(db);
  await db.close();
  return { ms: Math.round(performance.now() - t0), url: server.url, stop: () => server.stop() };
}

/** Median ms from publishEvents to the LISTEN reader's wake-up; NaN when NOTIFY does not arrive. */
async function notifyLatency(url: string): Promise<{ median: number; delivered: number }> {
  const db = openDb({ databaseUrl: url, max: 4 });
  const notifier = await startStreamNotifier(db.pool, { log: () => undefined });
  try {
    const conv = `bench_notify_${process.pid}`;
    await ensureConversation(db.pool, conv);
    const times: number[] = [];
    for (let i = 0; i < NOTICES; i++) {
      let woke: () => void = () => undefined;
      const arrived = new Promise<boolean>((r) => {
        woke = () => r(true);
        setTimeout(() => r(false), 500);
      });
      const unsubscribe = notifier.subscribe(conv, () => woke());
      const t0 = performance.now();
      await publishEvents(db.pool, conv, [{ kind: 'delta', channel: 'answer', payload: { text: `n${i}` } }]);
      if (await arrived) times.push(performance.now() - t0);
      unsubscribe();
    }
    return { median: Number(median(times).toFixed(2)), delivered: times.length };
  } finally {
    await notifier.close();
    await db.close();
  }
}

function duKb(path: string): number {
  const r = spawnSync('du', ['-sk', path], { encoding: 'utf8' });
  return Number(r.stdout.split('\t')[0]);
}

/** `npm run demo` in a fresh home with this database: wall time in s, or the failure. */
function demoWall(kind: EmbeddedDb): Promise<number | string> {
  const home = mkdtempSync(join(tmpdir(), `dreact-bench-demo-${kind}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, DREACT_HOME: home, DREACT_EMBEDDED_DB: kind };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'ANTHROPIC_API_KEY', 'DREACT_DEMO_KEEP']) delete env[k];
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'scripts', 'demo.ts')], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + String(d)).slice(-2000)));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      rmSync(home, { recursive: true, force: true });
      resolve(code === 0 ? Number(((performance.now() - t0) / 1000).toFixed(1)) : `failed (${code}): ${err.trim()}`);
    }),
  );
}

export async function benchEmbeddedDb(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  for (const kind of ['postgres', 'pglite'] as const) {
    const home = mkdtempSync(join(tmpdir(), `dreact-bench-embedded-db-${kind}-`));
    try {
      const first = await timedStart(kind, home);
      await first.stop();
      const warm = await timedStart(kind, home);
      try {
        const notify = await notifyLatency(warm.url);
        out[`${kind}.first_start_ms (new data dir: init + start + migrate)`] = first.ms;
        out[`${kind}.warm_start_ms (start + migrate)`] = warm.ms;
        out[`${kind}.disk_mb (after migrate)`] = Number((duKb(join(home, kind)) / 1024).toFixed(1));
        out[`${kind}.notify_delivery_median_ms (publish → LISTEN reader)`] =
          notify.delivered > 0 ? notify.median : 'not delivered (readers poll every 100 ms)';
        out[`${kind}.notify_delivered`] = `${notify.delivered}/${NOTICES}`;
      } finally {
        await warm.stop();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  if (process.env.DREACT_BENCH_DEMO !== '0')
    for (const kind of ['postgres', 'pglite'] as const)
      out[`${kind}.demo_wall_s (npm run demo, fresh home)`] = await demoWall(kind);
  return out;
}
