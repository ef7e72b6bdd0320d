/**
 * `npm test` on a machine with no Postgres configured (scripts/test-postgres.ts): DATABASE_URL
 * wins; else a server on 127.0.0.1:5432; else an embedded Postgres started for the run and stopped
 * after. The README's claim is checked by running the runner that way on two small integration
 * files, with the probed address moved to a closed port (this machine's own Postgres keeps running).
 * And the skip summary: a test whose tool is missing skips and the run names it with its install
 * command; under CI it fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../apps/stack/ports';
import { openDb } from '../../store/db';
import { listening, testDatabase } from '../../scripts/test-postgres';

const root = join(__dirname, '..', '..');

/** A loopback port nothing listens on. */
async function closedPort(): Promise<string> {
  return `127.0.0.1:${await freePort(0)}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runTests(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  // Without the node test runner's marker of this file's process, else the nested run does nothing.
  const { NODE_TEST_CONTEXT: _, ...childEnv } = env;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'run-tests.ts'), ...args], {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? 1, out })));
}

test('DATABASE_URL wins; a server on the probed address is used as it is; nothing is started', async () => {
  const given = await testDatabase({ DATABASE_URL: 'postgres://x@127.0.0.1:1/y' }, () => undefined);
  assert.deepEqual([given.source, given.url], ['DATABASE_URL', 'postgres://x@127.0.0.1:1/y']);
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const port = (server.address() as { port: number }).port;
    const found = await testDatabase({ DREACT_TEST_PG_PROBE: `127.0.0.1:${port}` }, () => undefined);
    assert.deepEqual([found.source, found.url], ['listening', undefined]);
  } finally {
    server.close();
  }
  assert.throws(() => listening('nonsense'), /DREACT_TEST_PG_PROBE="nonsense": expected host:port/);
});

test('nothing configured, nothing listening: an embedded Postgres with database test, gone after stop', async () => {
  const lines: string[] = [];
  const db = await testDatabase({ DREACT_TEST_PG_PROBE: await closedPort() }, (l) => lines.push(l));
  assert.equal(db.source, 'embedded');
  assert.match(db.url!, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test$/);
  assert.ok(
    lines.some((l) => /embedded Postgres for this run/.test(l)),
    lines.join('\n'),
  );
  const pool = openDb({ databaseUrl: db.url, max: 1 });
  try {
    const { rows } = await pool.pool.query<{ db: string }>('SELECT current_database() AS db');
    assert.equal(rows[0]!.db, 'test');
  } finally {
    await pool.close();
  }
  await db.stop();
  assert.equal(alive(db.pid!), false);
  assert.equal(existsSync(db.dataDir!), false);
});

test('npm test with no DATABASE_URL and nothing on the probed port: the run starts its own Postgres, passes, stops it', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, DREACT_TEST_PG_PROBE: await closedPort() };
  delete env.DATABASE_URL;
  delete env.DREACT_DB_SCHEMA;
  // These store tests use Postgres only: an unreachable address keeps the runner from starting a
  // Temporal dev server they would not use.
  env.TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:1';
  const { code, out } = await runTests(
    ['test/integration/store/turn-store.test.ts', 'test/integration/store/tool-store.test.ts'],
    env,
  );
  assert.equal(code, 0, out);
  const started =
    /embedded Postgres for this run at postgres:\/\/postgres@127\.0\.0\.1:(\d+)\/test \(pid (\d+), data in (\S+)\)/.exec(
      out,
    );
  assert.ok(started, out);
  assert.match(out, /# fail 0/);
  assert.doesNotMatch(out, /# pass 0\b/);
  assert.equal(alive(Number(started[2])), false, 'the run stopped its Postgres');
  assert.equal(existsSync(started[3]!), false, 'and removed its data');
  assert.equal(await listening(`127.0.0.1:${started[1]}`), false);
});

test('a test whose tool is missing skips; the run ends with its group, count and install command; under CI it fails', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: '/nonexistent' }; // no docker-compose, no docker
  delete env.CI;
  const skipped = await runTests(['test/unit/deploy/compose.test.ts'], env);
  assert.equal(skipped.code, 0, skipped.out);
  const last = skipped.out.trim().split('\n').at(-1);
  assert.equal(
    last,
    'skipped: docker-compose.yml validation (1) — no docker compose / docker-compose binary: apt-get install docker-compose',
  );
  const ci = await runTests(['test/unit/deploy/compose.test.ts'], { ...env, CI: 'true' });
  assert.notEqual(ci.code, 0, ci.out);
  assert.match(ci.out, /docker-compose\.yml validation: no docker compose \/ docker-compose binary — CI must have it/);
});
