/**
 * A real Postgres server (the embedded stack's default database, and `npm test`'s when none is
 * configured) run from the npm-installed binaries (postgres-binaries.ts): a data directory
 * initialised once (trust auth, UTF-8), the server on a loopback TCP port (no Unix socket), its
 * log in a file beside the data directory.
 *
 * A server that was not stopped is recovered at the next start, with a message saying what
 * happened: a stale `postmaster.pid` (the server was killed) is removed and Postgres replays its
 * WAL; a server left running by a stack that died without stopping it is shut down first. A server
 * whose owner (the process that started it, in `<dataDir>.owner`) is still alive is not touched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { ensureDatabase } from '../../store/cluster-store';
import { freePort } from './ports';
import { binariesFor, postgresBinaries, postgresRunAs, reachableBy, type RunAs } from './postgres-binaries';

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory (created and initialised when missing or empty). */
  dataDir: string;
  /** Preferred loopback port; any free one when it is taken. Default 55432. */
  port?: number;
  /** Database to connect to, created when missing. Default `postgres`. */
  database?: string;
  /** The server's log. Default `<dataDir>.log`. */
  logFile?: string;
  /** A throwaway cluster (tests): no fsync. */
  ephemeral?: boolean;
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  url: string;
  port: number;
  /** The postmaster's pid. */
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await sleep(25);
  }
  return true;
}

/** The pid and status lines of postmaster.pid, when there is one. */
function readPidFile(dataDir: string): { pid: number; dataDir: string; status: string } | undefined {
  try {
    const lines = readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n');
    return { pid: Number(lines[0]), dataDir: lines[1] ?? '', status: (lines[7] ?? '').trim() };
  } catch {
    return undefined;
  }
}

const ownerFile = (dataDir: string) => `${dataDir}.owner`;

/**
 * Before a start: deals with a postmaster.pid left behind. A live server of another live owner is
 * an error; a live orphan is shut down; a dead one's lock is removed. Each case is logged.
 */
export async function recoverDataDir(dataDir: string, log: (line: string) => void): Promise<void> {
  const lock = readPidFile(dataDir);
  if (!lock) return;
  const isOurServer = alive(lock.pid) && cmdline(lock.pid).includes(dataDir);
  if (isOurServer) {
    const owner = existsSync(ownerFile(dataDir)) ? Number(readFileSync(ownerFile(dataDir), 'utf8').trim()) : NaN;
    if (owner && owner !== process.pid && alive(owner))
      throw new Error(
        `the embedded Postgres in ${dataDir} is in use by process ${owner} (a running \`dreact dev\` or demo): ` +
          `stop it first, or set DREACT_HOME to another directory`,
      );
    log(
      `[stack] recovering: Postgres (pid ${lock.pid}) was left running on ${dataDir} by a stack that ended without ` +
        `stopping it; shutting it down`,
    );
    process.kill(lock.pid, 'SIGINT'); // fast shutdown
    if (!(await waitGone(lock.pid, 15_000))) {
      process.kill(lock.pid, 'SIGKILL');
      await waitGone(lock.pid, 5_000);
    }
  } else {
    log(
      `[stack] recovering: Postgres in ${dataDir} did not shut down cleanly (postmaster.pid names pid ${lock.pid}, ` +
        `which is gone); removing the stale lock — Postgres replays its write-ahead log on start`,
    );
  }
  rmSync(`${dataDir}/postmaster.pid`, { force: true });
}

function run(cmd: string, args: string[], runAs: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}), stdio: 'pipe' });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}:\n${out.trim()}`)),
    );
  });
}

/**
 * Where the server keeps `dataDir` so that `runAs` (root's stand-in) reaches it: dataDir itself —
 * giving its parent, our own state directory (DREACT_HOME, often a 0700 temp dir), search
 * permission for others when that is all it lacks — or, under a directory that user cannot
 * traverse (a project in /root), a directory in /var/tmp that dataDir links to.
 */
export function reachableDataDir(dataDir: string, runAs: RunAs, log: (l: string) => void): string {
  const parent = dirname(dataDir);
  mkdirSync(parent, { recursive: true });
  if (!runAs) return dataDir;
  if (existsSync(dataDir) && lstatSync(dataDir).isSymbolicLink()) return realpathSync(dataDir);
  if (reachableBy(runAs, parent)) return dataDir;
  const mode = statSync(parent).mode;
  if ((mode & 0o001) === 0) {
    chmodSync(parent, mode | 0o001);
    if (reachableBy(runAs, parent)) {
      log(`[stack] ${parent}: added search permission for others so the user ${runAs.user} reaches ${dataDir}`);
      return dataDir;
    }
    chmodSync(parent, mode); // not enough: a directory above it is closed too
  }
  if (existsSync(dataDir))
    throw new Error(
      `the embedded Postgres runs as the user ${runAs.user} (Postgres does not run as root), which cannot reach ` +
        `${dataDir}: set DREACT_HOME to a directory it can reach (e.g. under /tmp or /var/tmp)`,
    );
  const elsewhere = join(
    '/var/tmp',
    `dreact-postgres-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`,
  );
  mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
  symlinkSync(elsewhere, dataDir);
  log(
    `[stack] the user ${runAs.user} (Postgres does not run as root) cannot reach ${parent}: the Postgres data lives in ` +
      `${elsewhere}, linked from ${dataDir}`,
  );
  return elsewhere;
}

/** Creates and initialises the data directory when it holds no cluster yet. Returns whether it did. */
async function initialise(
  dataDir: string,
  initdb: string,
  runAs: RunAs,
  ephemeral: boolean,
  log: (l: string) => void,
): Promise<boolean> {
  if (existsSync(`${dataDir}/PG_VERSION`)) return false;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    log(`[stack] ${dataDir} holds no complete cluster (an interrupted first start?): initialising it again`);
    rmSync(dataDir, { recursive: true, force: true });
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) {
    chownSync(dataDir, runAs.uid, runAs.gid);
    if (!reachableBy(runAs, dataDir))
      throw new Error(
        `the embedded Postgres runs as the user ${runAs.user} (Postgres does not run as root), which cannot reach ` +
          `${dataDir}: set DREACT_HOME to a directory it can reach (e.g. under /tmp or /var/tmp)`,
      );
  }
  const args = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'];
  if (ephemeral) args.push('--no-sync');
  await run(initdb, args, runAs);
  return true;
}

function tail(file: string, from: number): string {
  try {
    return readFileSync(file, 'utf8').slice(from).trim().split('\n').slice(-12).join('\n');
  } catch {
    return '';
  }
}

/** Spawns the postmaster and waits until postmaster.pid says ready (or it exits: the log's tail). */
async function spawnServer(
  postgres: string,
  dataDir: string,
  port: number,
  logFile: string,
  runAs: RunAs,
  ephemeral: boolean,
): Promise<ChildProcess> {
  const logFrom = existsSync(logFile) ? statSync(logFile).size : 0;
  const fd = openSync(logFile, 'a');
  const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'max_connections=200'];
  if (ephemeral) settings.push('fsync=off', 'synchronous_commit=off', 'full_page_writes=off');
  const child = spawn(postgres, ['-D', dataDir, '-p', String(port), ...settings.flatMap((s) => ['-c', s])], {
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exited: string | undefined;
  child.once('exit', (code, sig) => (exited = `exited (${sig ?? `code ${code}`})`));
  child.once('error', (err) => (exited = err.message));
  const until = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the embedded Postgres ${exited} during start:\n${tail(logFile, logFrom)}`);
    const lock = readPidFile(dataDir);
    if (lock && lock.pid === child.pid && lock.status === 'ready') return child;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`the embedded Postgres was not ready after 60 s:\n${tail(logFile, logFrom)}`);
    }
    await sleep(15);
  }
}

/** Initialises (first time), recovers (after a crash) and starts the server; stop() shuts it down. */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const runAs = postgresRunAs(log);
  const dataDir = reachableDataDir(opts.dataDir, runAs, log);
  const ephemeral = opts.ephemeral ?? false;
  const database = opts.database ?? 'postgres';
  const logFile = opts.logFile ?? `${opts.dataDir}.log`;
  const bins = binariesFor(postgresBinaries(log), runAs, log);
  const t0 = Date.now();
  if (await initialise(dataDir, bins.initdb, runAs, ephemeral, log))
    log(`[stack] initialised the embedded Postgres in ${dataDir} (${Date.now() - t0} ms)`);
  await recoverDataDir(dataDir, log);

  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 1; !child; attempt++) {
    port = await freePort(opts.port ?? 55432);
    try {
      child = await spawnServer(bins.postgres, dataDir, port, logFile, runAs, ephemeral);
    } catch (err) {
      // Right after a crash, the killed server's backends may still hold its shared memory for a
      // moment; a port may be taken between the probe and the bind. Both pass on a retry.
      const transient = /shared memory block|could not bind|Address already in use/.test((err as Error).message);
      if (!transient || attempt >= 5) throw err;
      await sleep(300 * attempt);
    }
  }
  const server = child;
  writeFileSync(ownerFile(dataDir), `${process.pid}\n`);
  // Should this process exit without stop(), the server shuts itself down (fast shutdown).
  const onExit = () => server.kill('SIGINT');
  process.once('exit', onExit);
  try {
    if (database !== 'postgres') await ensureDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, database);
  } catch (err) {
    server.kill('SIGINT');
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database}`,
    port,
    pid: server.pid!,
    dataDir,
    stop() {
      stopping ??= (async () => {
        process.removeListener('exit', onExit);
        if (server.exitCode === null && server.signalCode === null) {
          const gone = new Promise<void>((r) => server.once('exit', () => r()));
          server.kill('SIGINT');
          const t = setTimeout(() => server.kill('SIGKILL'), 15_000);
          await gone;
          clearTimeout(t);
        }
        rmSync(ownerFile(dataDir), { force: true });
      })();
      return stopping;
    },
  };
}
