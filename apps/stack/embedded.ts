/**
 * The embedded local stack: Temporal dev server (SQLite file, Web UI), Postgres (DATABASE_URL, else
 * the embedded database: a real Postgres server from npm-installed binaries by default, or with
 * DREACT_EMBEDDED_DB=pglite PGlite in-process served over the wire protocol) and a worker. State
 * lives on disk in DREACT_HOME (default ./.dreact), so a conversation continues across separate CLI
 * invocations. A running `dreact dev` publishes its addresses in <home>/stack.json for other
 * invocations.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@temporalio/client';
import type { DreactWorker } from '../../workers/role-workers';
import {
  connectTemporalClient,
  connectTemporalWorker,
  localTemporalConnection,
  resolveTemporalConnection,
  type ResolvedTemporalConnection,
} from '../../client/temporal/connection';
import { migrate, openDb, type Db } from '../../store/db';
import { createWorker, envDefaultModel } from '../../workers/worker';
import { workerToolSet, type WorkerToolSetOptions } from '../../workers/tool-set';
import { startTemporalServer, type TemporalServer } from './temporal-server';
import { startEmbeddedPostgres } from './embedded-postgres';
import { startPglite } from './pglite';
import { freePort } from './ports';
import { setupTelemetry } from '../../workers/telemetry';

export interface StackInfo {
  pid: number;
  temporalAddress: string;
  /** The namespace the stack's worker polls (absent in a stack.json of an older version: `default`). */
  namespace?: string;
  uiUrl?: string;
  databaseUrl: string;
  /** True when Postgres is PGlite (NOTIFY does not deliver: stream readers poll). */
  pglite: boolean;
  /** The embedded database the stack started, when DATABASE_URL did not name one. */
  embeddedDb?: EmbeddedDb;
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

export { freePort };

/** The embedded database: `postgres` (default) or `pglite` (DREACT_EMBEDDED_DB). */
export type EmbeddedDb = 'postgres' | 'pglite';

export function embeddedDbSetting(value = process.env.DREACT_EMBEDDED_DB): EmbeddedDb {
  if (value === undefined || value === '' || value === 'postgres') return 'postgres';
  if (value === 'pglite') return 'pglite';
  throw new Error(`DREACT_EMBEDDED_DB=${JSON.stringify(value)}: expected "postgres" (the default) or "pglite"`);
}

export interface EmbeddedStack {
  info: StackInfo;
  db: Db;
  temporal: TemporalServer;
  client: Client;
  worker: DreactWorker;
  stop(): Promise<void>;
}

export interface StartStackOptions {
  home?: string;
  /** Publish stack.json so other CLI invocations use this stack (dev mode). */
  publish?: boolean;
  ui?: boolean;
  log?: (line: string) => void;
  /** The worker's tools (exec.python on DREACT_EXEC_BACKEND); tests inject the environment or the sandbox probe. */
  tools?: WorkerToolSetOptions;
  /** The Temporal connection settings (default: temporal.toml and TEMPORAL_*; the CLI adds its flags). */
  temporal?: ResolvedTemporalConnection;
  /** Agent definitions beside DREACT_AGENTS_DIR / ./agents (e.g. `dreact turn --agent ./support.yaml`). */
  agents?: { dir?: string; files?: readonly string[] };
}

export async function startEmbeddedStack(opts: StartStackOptions = {}): Promise<EmbeddedStack> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const home = opts.home ?? stackHome();
  mkdirSync(home, { recursive: true });
  const cleanups: Array<() => Promise<void>> = [];
  try {
    let databaseUrl = process.env.DATABASE_URL;
    let embeddedDb: EmbeddedDb | undefined;
    if (!databaseUrl) {
      embeddedDb = embeddedDbSetting();
      const embedded =
        embeddedDb === 'pglite'
          ? await startPglite(home, log)
          : await startEmbeddedPostgres({
              dataDir: join(home, 'postgres'),
              port: Number(process.env.DREACT_POSTGRES_PORT ?? 55432),
              log,
            });
      cleanups.unshift(() => embedded.stop());
      databaseUrl = embedded.url;
    }
    const pglite = embeddedDb === 'pglite';
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
      ...(opts.temporal ? { settings: opts.temporal } : {}),
    });
    cleanups.unshift(() => temporal.stop());

    // The server's connection settings: our dev server on loopback, or the configured one (TLS, API key).
    const nativeConnection = await connectTemporalWorker(temporal.connection);
    cleanups.unshift(() => nativeConnection.close());
    // The same tool set as the standalone worker (workers/tool-set.ts): exec.python included.
    const tools = await workerToolSet({ log: (line) => log(`[stack] ${line}`), ...opts.tools });
    // A turn that names no model: the configured provider (a key in the environment), else the
    // scripted demo — said at start.
    const defaultModel = envDefaultModel() ?? { provider: 'scripted' as const, script: 'demo' };
    log(
      `[stack] default model: ${defaultModel.provider === 'scripted' ? 'scripted "demo" (no ANTHROPIC_API_KEY)' : defaultModel.provider}`,
    );
    const worker = await createWorker({
      connection: nativeConnection,
      namespace: temporal.namespace,
      db,
      defaultModel,
      extraTools: tools.extraTools,
      fargate: tools.fargate,
      ...(opts.agents ? { agents: opts.agents } : {}),
    });
    const running = worker.run();
    cleanups.unshift(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const connection = await connectTemporalClient(temporal.connection);
    cleanups.unshift(() => connection.close());
    const client = new Client({
      connection,
      namespace: temporal.namespace,
      interceptors: setupTelemetry().clientInterceptors,
    });

    const info: StackInfo = {
      pid: process.pid,
      temporalAddress: temporal.address,
      namespace: temporal.namespace,
      uiUrl: temporal.uiUrl,
      databaseUrl,
      pglite,
      ...(embeddedDb ? { embeddedDb } : {}),
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
  configured: ResolvedTemporalConnection = resolveTemporalConnection(),
): Promise<{ info: StackInfo; client: Client; db: Db; close(): Promise<void> } | undefined> {
  const info = readStackInfo(home);
  if (!info) return undefined;
  // A stack pointed at a configured server keeps its settings (TLS, API key) in the environment,
  // not in stack.json: the same address means those settings; any other is the stack's own dev server.
  const namespace = info.namespace ?? 'default';
  const settings =
    configured.address === info.temporalAddress && configured.namespace === namespace
      ? configured
      : localTemporalConnection(info.temporalAddress, namespace);
  const connection = await connectTemporalClient(settings, { connectTimeout: '3 seconds' });
  const db = openDb({ databaseUrl: info.databaseUrl, max: 4 });
  return {
    info,
    client: new Client({ connection, namespace, interceptors: setupTelemetry().clientInterceptors }),
    db,
    async close() {
      await connection.close();
      await db.close();
    },
  };
}
