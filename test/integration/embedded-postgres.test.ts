/**
 * The embedded Postgres (apps/stack/embedded-postgres.ts): initialised once, restarted on the
 * same data; a server killed with SIGKILL, or left running by a process that was killed, is
 * recovered at the next start with a message saying so; a server whose owner still runs is not
 * touched.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../apps/stack/embedded-postgres';

const homes: string[] = [];
after(() => homes.forEach((h) => rmSync(h, { recursive: true, force: true })));
/** A fresh DREACT_HOME-like directory (mode 0700, as mkdtemp makes it) and its data directory. */
function newDataDir(): string {
  const home = mkdtempSync(join(tmpdir(), 'dreact-embedded-pg-'));
  homes.push(home);
  return join(home, 'postgres');
}

async function sql(url: string, text: string): Promise<Array<Record<string, unknown>>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as Array<Record<string, unknown>>;
  } finally {
    await c.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(dataDir: string, lines: string[] = []): Promise<EmbeddedPostgres> {
  return startEmbeddedPostgres({ dataDir, port: 0, database: 'test', log: (l) => lines.push(l) });
}

/** The child fixture: starts the server on dataDir in another process and reports its pid. */
async function startInChild(dataDir: string): Promise<{ child: ChildProcess; pid: number; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', 'support', 'embedded-postgres-child.ts'), dataDir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before starting Postgres`)));
  });
  return { child, ...(JSON.parse(line) as { pid: number; url: string }) };
}

test('initialised once; a restart keeps the data; the database is created; stop ends the server', async () => {
  const dataDir = newDataDir();
  const lines: string[] = [];
  const first = await start(dataDir, lines);
  assert.ok(
    lines.some((l) => /initialised the embedded Postgres/.test(l)),
    lines.join('\n'),
  );
  assert.match(first.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test$/);
  const [version] = await sql(first.url, 'SHOW server_version');
  assert.match(String(version!.server_version), /^18\./);
  await sql(first.url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$one$$)');
  await first.stop();
  assert.equal(alive(first.pid), false);
  assert.equal(existsSync(join(dataDir, 'postmaster.pid')), false);

  const again: string[] = [];
  const second = await start(dataDir, again);
  try {
    assert.equal(
      again.some((l) => /initialised|recovering/.test(l)),
      false,
      again.join('\n'),
    );
    assert.deepEqual(await sql(second.url, 'SELECT v FROM kept'), [{ v: 'one' }]);
  } finally {
    await second.stop();
  }
});

test('a server killed with SIGKILL: the next start removes the stale lock, says so, and has the committed data', async () => {
  const dataDir = newDataDir();
  const pg = await start(dataDir);
  await sql(pg.url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$before the crash$$)');
  process.kill(pg.pid, 'SIGKILL');
  while (alive(pg.pid)) await new Promise((r) => setTimeout(r, 20));
  assert.ok(existsSync(join(dataDir, 'postmaster.pid')), 'the killed server left its lock');

  const lines: string[] = [];
  const next = await start(dataDir, lines);
  try {
    assert.ok(
      lines.some((l) => /recovering: Postgres in .* did not shut down cleanly .*stale lock/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(await sql(next.url, 'SELECT v FROM kept'), [{ v: 'before the crash' }]);
  } finally {
    await next.stop();
    await pg.stop(); // the killed one: nothing left to do
  }
});

test('a server left running by a killed process is shut down and restarted, with a message', async () => {
  const dataDir = newDataDir();
  const { child, pid, url } = await startInChild(dataDir);
  await sql(url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$orphaned$$)');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  assert.ok(alive(pid), 'the server outlived the process that started it');

  const lines: string[] = [];
  const next = await start(dataDir, lines);
  try {
    assert.ok(
      lines.some((l) => new RegExp(`recovering: Postgres \\(pid ${pid}\\) was left running`).test(l)),
      lines.join('\n'),
    );
    assert.equal(alive(pid), false);
    assert.deepEqual(await sql(next.url, 'SELECT v FROM kept'), [{ v: 'orphaned' }]);
  } finally {
    await next.stop();
  }
});

test('a server whose owner still runs is not touched: the start fails naming the owner', async () => {
  const dataDir = newDataDir();
  const { child, pid } = await startInChild(dataDir);
  try {
    await assert.rejects(start(dataDir), new RegExp(`in use by process ${child.pid!}.*stop it first`));
    assert.ok(alive(pid));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  assert.equal(alive(pid), false, 'the owner stopped its server');
});

test(
  'as root, under a directory the postgres user cannot traverse: the data lives in /var/tmp, linked from the home',
  { skip: process.getuid?.() === 0 ? false : 'only as root (Postgres then runs as the postgres user)' },
  async () => {
    const closed = mkdtempSync(join(tmpdir(), 'dreact-embedded-pg-closed-')); // 0700, root's
    homes.push(closed);
    const dataDir = join(closed, 'home', 'postgres');
    const lines: string[] = [];
    const pg = await start(dataDir, lines);
    try {
      assert.match(pg.dataDir, /^\/var\/tmp\/dreact-postgres-[0-9a-f]{12}$/);
      assert.equal(realpathSync(dataDir), pg.dataDir);
      assert.ok(
        lines.some((l) => /cannot reach .*: the Postgres data lives in \/var\/tmp/.test(l)),
        lines.join('\n'),
      );
      await sql(pg.url, 'SELECT 1');
    } finally {
      await pg.stop();
      rmSync(pg.dataDir, { recursive: true, force: true });
      rmSync(`${pg.dataDir}.owner`, { force: true });
    }
  },
);
