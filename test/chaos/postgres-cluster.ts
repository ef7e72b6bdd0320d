/**
 * A throwaway Postgres cluster of the chaos suite's own (initdb in a temp dir, its own port), so
 * the suite can restart "the database" without touching the machine's shared server.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function pgBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort() : [];
  for (const v of versions.reverse()) {
    const p = join(root, v, 'bin', name);
    if (existsSync(p)) return p;
  }
  throw new Error(`no ${name} under ${root}: install the postgresql package`);
}

/** Runs a Postgres binary as the `postgres` user when we are root (initdb refuses root). */
function run(bin: string, args: string[]): string {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', pgBin(bin), ...args]] : [pgBin(bin), args];
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface PostgresCluster {
  url: string;
  restart(): void;
  stop(): void;
}

export function startPostgresCluster(port: number): PostgresCluster {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-chaos-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0)
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), 0);
  run('initdb', ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`;
  const start = () => run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart() {
      stop();
      start();
    },
    stop() {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
