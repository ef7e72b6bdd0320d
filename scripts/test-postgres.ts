/**
 * The Postgres a test run uses (`npm test`, scripts/run-tests.ts): DATABASE_URL when set; else the
 * server listening on 127.0.0.1:5432 (the tests' default URL, database `test`); else — a machine
 * with only Node and npm — an embedded Postgres started for the run (apps/stack/embedded-postgres.ts:
 * a throwaway cluster in a temp directory, trust auth, database `test`, no fsync) and stopped after.
 * DREACT_TEST_PG_PROBE=host:port moves the probed address (tests of this helper).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../apps/stack/embedded-postgres';

export const DEFAULT_PROBE = '127.0.0.1:5432';

export interface TestDatabase {
  /** DATABASE_URL for the run; undefined: the tests' default (postgres://postgres@127.0.0.1:5432/test). */
  url: string | undefined;
  source: 'DATABASE_URL' | 'listening' | 'embedded';
  /** The embedded server's postmaster pid and data directory (source `embedded`). */
  pid?: number;
  dataDir?: string;
  stop(): Promise<void>;
}

/** True when something accepts TCP connections at host:port (within timeoutMs). */
export function listening(address: string, timeoutMs = 1000): Promise<boolean> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at);
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`DREACT_TEST_PG_PROBE=${JSON.stringify(address)}: expected host:port, e.g. 127.0.0.1:5432`);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function testDatabase(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void = (l) => console.log(l),
): Promise<TestDatabase> {
  const none = async () => undefined;
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'DATABASE_URL', stop: none };
  const probe = env.DREACT_TEST_PG_PROBE || DEFAULT_PROBE;
  if (await listening(probe)) return { url: undefined, source: 'listening', stop: none };
  const home = mkdtempSync(join(tmpdir(), 'dreact-test-postgres-'));
  try {
    const pg = await startEmbeddedPostgres({
      dataDir: join(home, 'postgres'),
      port: 0,
      database: 'test',
      ephemeral: true,
      log: (l) => log(`# ${l.replace(/^\[stack\] /, '')}`),
    });
    log(
      `# no DATABASE_URL and nothing on ${probe}: embedded Postgres for this run at ${pg.url} (pid ${pg.pid}, data in ${pg.dataDir})`,
    );
    return {
      url: pg.url,
      source: 'embedded',
      pid: pg.pid,
      dataDir: pg.dataDir,
      async stop() {
        await pg.stop();
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
}
