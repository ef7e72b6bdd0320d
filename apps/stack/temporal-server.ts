/**
 * Starts `temporal server start-dev` through the SDK's TestWorkflowEnvironment.createLocal, with
 * our search attributes registered, an optional on-disk database (state survives restarts) and
 * the Web UI. A configured server (TEMPORAL_ADDRESS, a temporal.toml profile's address — the
 * settings of client/temporal/connection.ts, TLS and API key included) is used instead.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { guardedConnection } from '../../client/temporal/closed-channel';
import {
  connectTemporalClient,
  connectionFailure,
  connectionOptionsOf,
  localTemporalConnection,
  resolveTemporalConnection,
  type ResolvedTemporalConnection,
} from '../../client/temporal/connection';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contract/definitions';
import { ensureTemporalCli } from './temporal-cli';

export interface TemporalServerOptions {
  /** SQLite file for persistence; in-memory when omitted. */
  dbFilename?: string;
  port?: number;
  ui?: boolean;
  uiPort?: number;
  /** Use this server (plaintext, namespace `default`) instead of starting one (default: the configured one, if any). */
  address?: string;
  /**
   * The connection settings (default: resolveTemporalConnection() — temporal.toml and TEMPORAL_*):
   * an address set there means that server; otherwise we start one, holding their namespace.
   */
  settings?: ResolvedTemporalConnection;
  /** Extra `temporal server start-dev` arguments (e.g. dynamic config). */
  extraArgs?: string[];
  /**
   * Run the CLI as our own child process with its output in this file (the embedded stack: keeps
   * stdout clean for `--json`). Without it the SDK's createLocal starts the server.
   */
  logFile?: string;
}

export interface TemporalServer {
  env: TestWorkflowEnvironment;
  address: string;
  /** The namespace its clients and workers use. */
  namespace: string;
  /** How to connect to it (client/temporal/connection.ts): a configured server's settings, or plain loopback. */
  connection: ResolvedTemporalConnection;
  uiUrl?: string;
  /** True when we started the server (and stop() stops it). */
  owned: boolean;
  stop(): Promise<void>;
}

/**
 * Dispatch tuning for the dev server (embedded stack, tests, benches). The history service reads
 * new transfer tasks at most `history.transferProcessorMaxPollRPS` times a second per shard
 * (default 20, burst 20; server 1.29.1 service/history/queues/reader.go). Every activity round trip
 * needs two such reads (the activity task, then the next workflow task) and the dev server has one
 * shard, so sequential activities settle at ~2 × 50 ms. Raising the limit takes a bare round trip
 * to ~10–20 ms. Eager activity execution saves one more dispatch; fairness keys need the matching
 * flag on a self-hosted server. Fairness holds within a task-queue partition, and new tasks go to a
 * random one of four by default, so a backlog is served in four interleaved orders: one write
 * partition makes the tenant fairness exact (test/integration/fairness.test.ts; with four, a late
 * turn of the bursting tenant itself sometimes overtook the burst). Read partitions stay at the
 * default so tasks already written to the others (an existing on-disk server) still drain. A production server with several shards wants ~100–200 per shard
 * with `history.transferProcessorMaxPollHostRPS` as the host cap (scripts/temporal-dynamicconfig.yaml).
 *
 * The CLI's dev server turns `system.forceSearchAttributesCacheRefreshOnRead` on (so search
 * attributes added at run time show at once), which makes EVERY read of the search-attribute map —
 * each workflow start, each search-attribute upsert — read the cluster metadata from SQLite: under
 * load ~40 % of the dev server's persistence calls and ~20 % of its persistence time, on the one
 * SQLite connection that history writes also need. Our search attributes are registered at start
 * (`--search-attribute`) and never added later, so the cache stays on.
 *
 * Timers shorter than a second fire a second late by default: the timer queue reads up to
 * now + `history.timerProcessorMaxTimeShift` (1 s), and a new timer due before that read level is
 * moved just past it (service/history/shard/context_impl.go). That is every retry backoff under a
 * second (a decision round retried after a killed worker's heartbeat timeout waited ~1 s instead of
 * 200 ms) and stretches short timeouts; 50 ms keeps timers on time for a few more timer-queue reads.
 */
export const DEV_SERVER_DYNAMIC_CONFIG = [
  'system.forceSearchAttributesCacheRefreshOnRead=false',
  'history.transferProcessorMaxPollRPS=10000',
  'system.enableActivityEagerExecution=true',
  'matching.enableFairness=true',
  'matching.numTaskqueueWritePartitions=1',
  'history.timerProcessorMaxTimeShift="50ms"',
];

/** WAL and relaxed fsync for the dev server's SQLite file: the same durability a crash-tolerant dev stack needs, a third of the write latency. */
const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

/** `default` is always there; another configured namespace is created at start. */
const namespaceArgs = (namespace: string) => (namespace === 'default' ? [] : ['--namespace', namespace]);

function tuningArgs(dbFilename: string | undefined): string[] {
  const args = DEV_SERVER_DYNAMIC_CONFIG.flatMap((kv) => ['--dynamic-config-value', kv]);
  if (dbFilename) args.push(...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]));
  return args;
}

/**
 * The configured server, when the settings name one (an address from a variable, a profile or a
 * flag); undefined: start our own.
 */
export function configuredTemporalServer(
  resolved: ResolvedTemporalConnection = resolveTemporalConnection(),
): ResolvedTemporalConnection | undefined {
  return resolved.sources.address === 'default' ? undefined : resolved;
}

/** An environment on a server someone else runs: connected, namespace checked, refusals as one line. */
async function existingServer(connection: ResolvedTemporalConnection): Promise<TestWorkflowEnvironment> {
  let env: TestWorkflowEnvironment | undefined;
  try {
    const { address, ...connectionOptions } = connectionOptionsOf(connection);
    env = await TestWorkflowEnvironment.createFromExistingServer({
      address,
      namespace: connection.namespace,
      plugins: [guardedConnection],
      connectionOptions,
    });
    await env.connection.workflowService.describeNamespace({ namespace: connection.namespace });
    return env;
  } catch (err) {
    await env?.teardown().catch(() => undefined);
    throw await connectionFailure(err, connection);
  }
}

export async function startTemporalServer(opts: TemporalServerOptions = {}): Promise<TemporalServer> {
  const settings = opts.extraArgs ? undefined : (opts.settings ?? resolveTemporalConnection());
  const outside = opts.address
    ? localTemporalConnection(opts.address)
    : settings
      ? configuredTemporalServer(settings)
      : undefined;
  if (outside) {
    const env = await existingServer(outside);
    return {
      env,
      address: outside.address,
      namespace: outside.namespace,
      connection: outside,
      uiUrl: process.env.DREACT_TEMPORAL_UI_URL,
      owned: false,
      stop: () => env.teardown(),
    };
  }
  // Our own server also holds the configured namespace (TEMPORAL_NAMESPACE or a profile's), so every
  // client and worker of the stack can use it.
  const namespace = settings?.namespace ?? 'default';
  const path = ensureTemporalCli();
  if (path && opts.logFile) return spawnDevServer(path, { ...opts, logFile: opts.logFile }, namespace);
  const env = await TestWorkflowEnvironment.createLocal({
    plugins: [guardedConnection],
    server: {
      executable: path ? { type: 'existing-path', path } : { type: 'cached-download' },
      ip: '127.0.0.1',
      port: opts.port,
      dbFilename: opts.dbFilename,
      ui: opts.ui ?? false,
      uiPort: opts.uiPort,
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      log: { format: 'pretty', level: 'error' },
      extraArgs: [...tuningArgs(opts.dbFilename), ...namespaceArgs(namespace), ...(opts.extraArgs ?? [])],
    },
  });
  const uiUrl = opts.ui ? `http://127.0.0.1:${opts.uiPort ?? Number(env.address.split(':').pop()) + 1000}` : undefined;
  return {
    env,
    address: env.address,
    namespace,
    connection: localTemporalConnection(env.address, namespace),
    uiUrl,
    owned: true,
    stop: () => env.teardown(),
  };
}

/** Spawns `temporal server start-dev` with the same settings createLocal uses, output to a log file. */
async function spawnDevServer(
  path: string,
  opts: TemporalServerOptions & { logFile: string },
  namespace: string,
): Promise<TemporalServer> {
  if (!opts.port) throw new Error('spawnDevServer needs a port');
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--namespace',
    'default',
    '--log-format',
    'pretty',
    '--log-level',
    'warn',
  ];
  if (opts.dbFilename) args.push('--db-filename', opts.dbFilename);
  if (opts.ui) args.push('--ui-port', String(opts.uiPort ?? opts.port + 1000));
  else args.push('--headless');
  for (const a of SEARCH_ATTRIBUTE_KEYS)
    args.push('--search-attribute', `${a.name}=${a.type === 'INT' ? 'Int' : 'Keyword'}`);
  for (const kv of [
    'frontend.enableServerVersionCheck=false',
    'frontend.enableUpdateWorkflowExecution=true',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    'frontend.enableExecuteMultiOperation=true',
  ]) {
    args.push('--dynamic-config-value', kv);
  }
  args.push(...tuningArgs(opts.dbFilename), ...namespaceArgs(namespace), ...(opts.extraArgs ?? []));
  const fd = openSync(opts.logFile, 'a');
  const child = spawn(path, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: string | undefined;
  child.once('exit', (code, sig) => (exited = `exited with ${code ?? sig}`));
  const address = `127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`temporal server start-dev ${exited}; see ${opts.logFile}`);
    try {
      const connection = await connectTemporalClient(localTemporalConnection(address), {
        connectTimeout: '1 second',
        checkNamespace: false,
      });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `temporal server did not become ready on ${address} within 60 s (${(err as Error).message}); see ${opts.logFile}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
  const uiUrl = opts.ui ? `http://127.0.0.1:${opts.uiPort ?? opts.port + 1000}` : undefined;
  return {
    env,
    address,
    namespace,
    connection: localTemporalConnection(address, namespace),
    uiUrl,
    owned: true,
    async stop() {
      await env.teardown();
      if (exited) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await done;
      clearTimeout(timer);
    },
  };
}
