/**
 * The embedded local stack: Temporal dev server (SQLite file, Web UI), Postgres (DATABASE_URL, or
 * PGlite in-process served over the Postgres wire protocol) and a worker. State lives on disk in
 * DREACT_HOME (default ./.dreact), so a conversation continues across separate CLI invocations.
 * A running `dreact dev` publishes its addresses in <home>/stack.json for other invocations.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { migrate, openDb, type Db } from '../../store/db';
import { createWorker } from '../../workers/worker';
import { startTemporalServer, type TemporalServer } from './temporal-server';
import { setupTelemetry } from '../../workers/telemetry';

export interface StackInfo {
  pid: number;
  temporalAddress: string;
  uiUrl?: string;
  databaseUrl: string;
  /** True when Postgres is PGlite (NOTIFY does not deliver: stream readers poll). */
  pglite: boolean;
  startedAt: string;
}

export function stackHome(): string {
  return resolve(process.env.DREACT_HOME ?? '.dreact');
}

const infoFile = (home: string) => join(home, 'stack.json');

export function readStackInfo(home = stackHome()): StackInfo | undefined {
  const file = infoFile(home);
  if (!existsSync(file)) return undefined;
  const info = JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
  try {
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined; // stale: that process is gone
  }
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const srv = createServer();
    srv.once('error', () => resolvePort(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolvePort(true)));
  });
}

/** The preferred loopback port when free, else any free one. */
export async function freePort(preferred: number): Promise<number> {
  if (await portFree(preferred)) return preferred;
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface EmbeddedStack {
  info: StackInfo;
  db: Db;
  temporal: TemporalServer;
  client: Client;
  worker: Worker;
  stop(): Promise<void>;
}

export interface StartStackOptions {
  home?: string;
  /** Publish stack.json so other CLI invocations use this stack (dev mode). */
  publish?: boolean;
  ui?: boolean;
  log?: (line: string) => void;
}

/** Starts PGlite with its data dir under home and serves it on a loopback port. */
async function startPglite(home: string, log: (l: string) => void): Promise<{ url: string; stop(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dataDir = join(home, 'pglite');
  log(`[stack] PGlite data in ${dataDir}${existsSync(dataDir) ? '' : ' (first start initialises it, ~20 s)'}`);
  // pgvector for react.memsearch's semantic half (the migration creates the extension).
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const pg = await PGlite.create(dataDir, { extensions: { vector } });
  const port = await freePort(Number(process.env.DREACT_PGLITE_PORT ?? 55432));
  // maxConnections > 1 so the pg driver's pool (activities + stream readers) can connect at once.
  const server = new PGLiteSocketServer({ db: pg, port, host: '127.0.0.1', maxConnections: 32 });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await pg.close();
    },
  };
}

export async function startEmbeddedStack(opts: StartStackOptions = {}): Promise<EmbeddedStack> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const home = opts.home ?? stackHome();
  mkdirSync(home, { recursive: true });
  const cleanups: Array<() => Promise<void>> = [];
  try {
    let databaseUrl = process.env.DATABASE_URL;
    let pglite = false;
    if (!databaseUrl) {
      const embedded = await startPglite(home, log);
      cleanups.unshift(embedded.stop);
      databaseUrl = embedded.url;
      pglite = true;
    }
    const db = openDb({ databaseUrl });
    cleanups.unshift(() => db.close());
    await migrate(db);

    const ui = opts.ui ?? true;
    const port = await freePort(Number(process.env.DREACT_TEMPORAL_PORT ?? 7233));
    const uiPort = ui ? await freePort(Number(process.env.DREACT_TEMPORAL_UI_PORT ?? port + 1000)) : undefined;
    log(`[stack] starting Temporal dev server on 127.0.0.1:${port} (state in ${join(home, 'temporal.db')})`);
    const temporal = await startTemporalServer({
      dbFilename: join(home, 'temporal.db'),
      port,
      ui,
      uiPort,
      logFile: join(home, 'temporal.log'),
    });
    cleanups.unshift(() => temporal.stop());

    const nativeConnection = await NativeConnection.connect({ address: temporal.address });
    cleanups.unshift(() => nativeConnection.close());
    const worker = await createWorker({ connection: nativeConnection, db });
    const running = worker.run();
    cleanups.unshift(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const connection = await Connection.connect({ address: temporal.address });
    cleanups.unshift(() => connection.close());
    const client = new Client({ connection, interceptors: setupTelemetry().clientInterceptors });

    const info: StackInfo = {
      pid: process.pid,
      temporalAddress: temporal.address,
      uiUrl: temporal.uiUrl,
      databaseUrl,
      pglite,
      startedAt: new Date().toISOString(),
    };
    if (opts.publish) {
      writeFileSync(infoFile(home), `${JSON.stringify(info, null, 2)}\n`);
      cleanups.unshift(async () => rmSync(infoFile(home), { force: true }));
    }
    let stopped = false;
    return {
      info,
      db,
      temporal,
      client,
      worker,
      async stop() {
        if (stopped) return;
        stopped = true;
        for (const c of cleanups) await c();
      },
    };
  } catch (err) {
    for (const c of cleanups) await c().catch((e: Error) => log(`[stack] cleanup after failed start: ${e.message}`));
    throw err;
  }
}

/** Connects to a running `dreact dev` stack (stack.json), or returns undefined. */
export async function connectToRunningStack(
  home = stackHome(),
): Promise<{ info: StackInfo; client: Client; db: Db; close(): Promise<void> } | undefined> {
  const info = readStackInfo(home);
  if (!info) return undefined;
  const connection = await Connection.connect({ address: info.temporalAddress, connectTimeout: '3 seconds' });
  const db = openDb({ databaseUrl: info.databaseUrl, max: 4 });
  return {
    info,
    client: new Client({ connection, interceptors: setupTelemetry().clientInterceptors }),
    db,
    async close() {
      await connection.close();
      await db.close();
    },
  };
}
