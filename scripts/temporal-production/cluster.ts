/**
 * Starts the production Temporal server (`go.temporal.io/server` v1.29.1, built by build.ts) on
 * loopback as a cluster of separate processes — frontend, two history hosts sharing the shards,
 * matching, and the system worker with internal-frontend — on Postgres (its own two databases,
 * schema created with the server's SQL tool), with mTLS on the frontend and JWT authorization.
 * It registers the namespace and the project's search attributes with an admin token, and hands
 * back what a client or worker needs (TEMPORAL_* environment, certificates, tokens) and handles
 * to kill and restart each process. Every process it started is stopped by stop(), and killed
 * when this Node process exits.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from '@temporalio/client';
import { databaseHasTable, dropDatabases, ensureDatabase } from '../../store/cluster-store';
import { DEFAULT_DATABASE_URL } from '../../store/db';
import { freePort, portFree } from '../../apps/stack/ports';
import { ensureProductionServer, type ProductionServerBuild } from './build';
import { registerNamespace } from './namespace';
import { makeCertificates, type Certificates } from './certs';
import { serveJwks, tokenSigner, type JwksServer } from './jwt';
import {
  writeDynamicConfig,
  writeProcessConfig,
  type ClusterLayout,
  type Ports,
  type PostgresTarget,
  type ServiceName,
} from './config';

export interface ProductionTemporalOptions {
  /** Working directory (certificates, configs, logs, the JWT key). Default: a fresh temp dir, removed by stop(). */
  home?: string;
  /** The Postgres server to create the databases on (any database of it). Default DATABASE_URL, else 127.0.0.1:5432. */
  databaseUrl?: string;
  /** Database names: `<prefix>` and `<prefix>_visibility`. Default: temporal_prod_<random> (dropped by stop()). */
  databasePrefix?: string;
  /** Drop the databases at stop(). Default: true when the prefix was generated. */
  dropDatabases?: boolean;
  /** The namespace to register. Default `dreact`. */
  namespace?: string;
  /** History hosts (separate processes). Default 2. */
  historyHosts?: number;
  /** History shards (fixed for the life of the databases). Default 8. */
  shards?: number;
  /** The frontend's port. Default: any free one. */
  port?: number;
  /** The JWKS server's port. Default: any free one. */
  jwksPort?: number;
  /**
   * Postgres connections per server process (default store; visibility a quarter). Default 8: the
   * five processes stay under ~50, leaving room on a server with the default max_connections (100)
   * for the worker and the rest (at 20 each a shared server ran out: "too many clients already").
   */
  postgresConnections?: number;
  /** Server log level (each process logs JSON to <home>/logs/<process>.log). Default `warn`. */
  logLevel?: string;
  log?: (line: string) => void;
}

export interface ProductionTemporalTokens {
  /** `temporal-system:admin` (the server's system scope): registers namespaces and search attributes. */
  admin: string;
  /** `<namespace>:write`: what a worker, the CLI and the gateway need. */
  writer: string;
  /** `other:write`: a valid token without the namespace's permission. */
  noPermission: string;
  /** `<namespace>:write`, but expired an hour ago. */
  expired: string;
}

export type ProcessName = 'frontend' | 'history' | 'matching' | 'worker';

export interface ProductionTemporal {
  /** host:port of the frontend (mTLS). */
  address: string;
  namespace: string;
  home: string;
  certs: Certificates;
  tokens: ProductionTemporalTokens;
  databases: { default: string; visibility: string; url: string };
  /** TEMPORAL_* variables that point a client or worker at this cluster (API key: the writer token). */
  env: Record<string, string>;
  /** Options for Connection.connect / NativeConnection.connect with a token (default: the writer's). */
  connectionOptions(apiKey?: string): Pick<ConnectionOptions, 'address' | 'tls' | 'apiKey'> & { address: string };
  /** Running processes with their pids (history: one per host, by index). */
  processes(): Array<{ service: ProcessName; index: number; pid: number | undefined; running: boolean }>;
  /** Sends `signal` (default SIGKILL) to one process and waits for it to exit. */
  kill(service: ProcessName, index?: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a stopped process again and waits until it listens. */
  restart(service: ProcessName, index?: number): Promise<void>;
  /** The tail of one process's log. */
  logTail(service: ProcessName, index?: number, chars?: number): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const taken = new Set<number>();
/**
 * A free loopback port below 32768: the server keeps each host's membership port in a smallint
 * column (cluster_membership.rpc_port), so an ephemeral port (often > 32767) fails its start.
 */
async function lowPort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = 20000 + Math.floor(Math.random() * 12000);
    if (!taken.has(p) && (await portFree(p))) {
      taken.add(p);
      return p;
    }
  }
  throw new Error('no free loopback port in 20000–32000');
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function postgresTarget(url: string, prefix: string): PostgresTarget {
  const u = new URL(url);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password),
    database: prefix,
    visibilityDatabase: `${prefix}_visibility`,
  };
}

/** Creates the two databases (when missing) and brings their schemas to the module's latest version. */
async function setupSchemas(build: ProductionServerBuild, adminUrl: string, pg: PostgresTarget): Promise<void> {
  for (const [database, dir] of [
    [pg.database, 'temporal'],
    [pg.visibilityDatabase, 'visibility'],
  ] as const) {
    await ensureDatabase(adminUrl, database);
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${database}`;
    const versioned = await databaseHasTable(dbUrl.toString(), 'schema_version');
    const base = [
      '--plugin',
      'postgres12',
      '--endpoint',
      pg.host,
      '--port',
      String(pg.port),
      '--user',
      pg.user,
      ...(pg.password ? ['--password', pg.password] : []),
      '--database',
      database,
      '--quiet',
    ];
    const run = (args: string[]) => {
      try {
        execFileSync(build.sqlTool, [...base, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        const e = err as { stderr?: Buffer; stdout?: Buffer };
        throw new Error(
          `temporal-sql-tool ${args[0]} on ${database} failed: ${(e.stderr?.toString() || e.stdout?.toString() || String(err)).trim().slice(-800)}`,
        );
      }
    };
    if (!versioned) run(['setup-schema', '--version', '0.0']);
    run(['update-schema', '--schema-dir', join(build.schemaDir, dir, 'versioned')]);
  }
}

interface Proc {
  service: ProcessName;
  index: number;
  configDir: string;
  ports: Ports;
  logFile: string;
  child?: ChildProcess;
  exited?: Promise<void>;
}

const SERVICES: Record<ProcessName, ServiceName[] | string[]> = {
  frontend: ['frontend'],
  history: ['history'],
  matching: ['matching'],
  // The system worker (schedules, worker-deployment and other system workflows) and the
  // internal-frontend it talks to (no authorizer: cluster-internal traffic).
  worker: ['worker', 'internal-frontend'],
};

export async function startProductionTemporal(opts: ProductionTemporalOptions = {}): Promise<ProductionTemporal> {
  const log = opts.log ?? (() => undefined);
  const build = ensureProductionServer(log);
  const ownHome = opts.home === undefined;
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'dreact-temporal-prod-'));
  mkdirSync(join(home, 'logs'), { recursive: true });
  const namespace = opts.namespace ?? 'dreact';
  const generated = opts.databasePrefix === undefined;
  const prefix = opts.databasePrefix ?? `temporal_prod_${Math.random().toString(36).slice(2, 8)}`;
  const adminUrl = opts.databaseUrl ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const pg = postgresTarget(adminUrl, prefix);
  const drop = opts.dropDatabases ?? generated;

  const certs = makeCertificates(join(home, 'certs'));
  const signer = tokenSigner(join(home, 'jwt-signing-key.pem'));
  const tokens: ProductionTemporalTokens = {
    admin: signer.token('dreact-admin', ['temporal-system:admin']),
    writer: signer.token('dreact-worker', [`${namespace}:write`]),
    noPermission: signer.token('someone-else', ['other:write']),
    expired: signer.token('dreact-worker', [`${namespace}:write`], -3600),
  };
  let jwks: JwksServer | undefined;
  const procs: Proc[] = [];
  const onExit = () => {
    for (const p of procs) p.child?.kill('SIGKILL');
  };
  process.once('exit', onExit);
  const stopAll = async () => {
    process.removeListener('exit', onExit);
    await Promise.all(
      procs.map(async (p) => {
        if (!p.child || p.child.exitCode !== null || p.child.signalCode !== null) return;
        p.child.kill('SIGTERM');
        const timer = setTimeout(() => p.child?.kill('SIGKILL'), 10_000);
        await p.exited;
        clearTimeout(timer);
      }),
    );
    await jwks?.close();
  };

  try {
    await setupSchemas(build, adminUrl, pg);
    jwks = await serveJwks(signer.jwks, opts.jwksPort ?? 0);
    const port = lowPort;
    const pair = async (grpc?: number): Promise<Ports> => ({ grpc: grpc ?? (await port()), membership: await port() });
    const layout: ClusterLayout = {
      root: home,
      shards: opts.shards ?? 8,
      frontend: await pair(opts.port ? await freePort(opts.port) : undefined),
      internalFrontend: await pair(),
      history: await Promise.all(Array.from({ length: opts.historyHosts ?? 2 }, () => pair())),
      matching: await pair(),
      worker: await pair(),
      postgres: pg,
      certs,
      jwksUrl: jwks.url,
      logLevel: opts.logLevel ?? 'warn',
      postgresConnections: opts.postgresConnections ?? 8,
    };
    const dynamicConfig = writeDynamicConfig(home);
    const add = (service: ProcessName, index: number, ports: Ports) =>
      procs.push({
        service,
        index,
        ports,
        configDir: writeProcessConfig(
          layout,
          service === 'history' ? `history-${index}` : service,
          service === 'history' ? index : 0,
          dynamicConfig,
        ),
        logFile: join(home, 'logs', service === 'history' ? `history-${index}.log` : `${service}.log`),
      });
    layout.history.forEach((p, i) => add('history', i, p));
    add('matching', 0, layout.matching);
    add('frontend', 0, layout.frontend);
    // The system worker serves no gRPC: its process is ready when its internal-frontend listens.
    add('worker', 0, layout.internalFrontend);

    const spawnProc = (p: Proc) => {
      const fd = openSync(p.logFile, 'a');
      const args = ['--root', home, '--config', p.configDir, '--env', 'development', 'start'];
      for (const s of SERVICES[p.service]) args.push('--service', s);
      p.child = spawn(build.server, args, {
        stdio: ['ignore', fd, fd],
        env: { ...process.env, TEMPORAL_VERSION_CHECK_DISABLED: '1' },
      });
      closeSync(fd);
      const child = p.child;
      p.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    };
    const tail = (p: Proc, chars = 3000) => {
      try {
        return readFileSync(p.logFile, 'utf8').slice(-chars);
      } catch {
        return '';
      }
    };
    const waitListening = async (p: Proc, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await listening(p.ports.grpc))) {
        const child = p.child!;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(
            `temporal-server ${p.service}${p.service === 'history' ? ` ${p.index}` : ''} exited (${child.exitCode ?? child.signalCode}): ${tail(p, 1500)}`,
          );
        if (Date.now() > deadline)
          throw new Error(
            `temporal-server ${p.service} did not listen on ${p.ports.grpc} within ${timeoutMs / 1000} s; see ${p.logFile}`,
          );
        await sleep(200);
      }
    };
    const t0 = Date.now();
    // The first process initialises the cluster metadata in a fresh database; the others started
    // beside it race it there and fail. One first, then the rest together.
    spawnProc(procs[0]!);
    await waitListening(procs[0]!, 120_000);
    for (const p of procs.slice(1)) spawnProc(p);
    for (const p of procs.slice(1)) await waitListening(p, 120_000);
    log(`[temporal-production] ${procs.length} processes listening after ${Date.now() - t0} ms`);

    const address = `127.0.0.1:${layout.frontend.grpc}`;
    const connectionOptions = (apiKey: string = tokens.writer) => ({
      address,
      tls: {
        serverNameOverride: certs.serverName,
        serverRootCACertificate: readFileSync(certs.caCert),
        clientCertPair: { crt: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) },
      },
      apiKey,
    });
    await registerNamespace(connectionOptions(tokens.admin), namespace, log);
    log(`[temporal-production] ready on ${address} (namespace ${namespace}) after ${Date.now() - t0} ms`);

    const find = (service: ProcessName, index = 0) => {
      const p = procs.find((x) => x.service === service && x.index === index);
      if (!p) throw new Error(`no ${service} process ${index}`);
      return p;
    };
    return {
      address,
      namespace,
      home,
      certs,
      tokens,
      databases: { default: pg.database, visibility: pg.visibilityDatabase, url: adminUrl },
      env: {
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: namespace,
        TEMPORAL_API_KEY: tokens.writer,
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
        TEMPORAL_TLS_SERVER_NAME: certs.serverName,
      },
      connectionOptions,
      processes: () =>
        procs.map((p) => ({
          service: p.service,
          index: p.index,
          pid: p.child?.pid,
          running: !!p.child && p.child.exitCode === null && p.child.signalCode === null,
        })),
      async kill(service, index = 0, signal = 'SIGKILL') {
        const p = find(service, index);
        if (!p.child || p.child.exitCode !== null || p.child.signalCode !== null) return;
        p.child.kill(signal);
        await p.exited;
      },
      async restart(service, index = 0) {
        const p = find(service, index);
        if (p.child && p.child.exitCode === null && p.child.signalCode === null)
          throw new Error(`${service} ${index} is running: kill it first`);
        spawnProc(p);
        await waitListening(p, 60_000);
      },
      logTail: (service, index = 0, chars) => tail(find(service, index), chars),
      async stop() {
        await stopAll();
        if (drop) await dropDatabases(adminUrl, [pg.database, pg.visibilityDatabase]).catch(() => undefined);
        if (ownHome) rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stopAll();
    if (drop) await dropDatabases(adminUrl, [pg.database, pg.visibilityDatabase]).catch(() => undefined);
    throw err;
  }
}
