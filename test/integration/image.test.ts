/**
 * The production images (Dockerfile, scripts/build-image.sh; built by .ci/run, else here): the
 * user is not root; with a read-only root filesystem a write outside DREACT_HOME and /tmp fails;
 * the worker in the container (host networking, loopback) starts, polls and runs a turn against
 * this run's Temporal dev server and Postgres; the gateway answers and the health command says
 * so; the exec role's image has bubblewrap and python3. Cold start (container start → polling) is
 * printed.
 */
import { after, before, describe, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DreactClient } from '../../client/api';
import { Client, Connection } from '@temporalio/client';
import { complete, uniqueId } from '../support/stack';
import { countSkipped, needs } from '../support/requirements';
import { dropSchema, openDb, type Db } from '../../store/db';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const IMAGE = 'dreact:local';
const EXEC_IMAGE = 'dreact-exec-worker:local';

/** Why the image tests cannot run here, or undefined (the image is built when missing). */
function unavailable(): string | undefined {
  if (spawnSync('docker', ['info'], { stdio: 'ignore' }).status !== 0) return 'no docker engine answers (docker info)';
  const have = (tag: string) => spawnSync('docker', ['image', 'inspect', tag], { stdio: 'ignore' }).status === 0;
  if (have(IMAGE) && have(EXEC_IMAGE)) return undefined;
  const built = spawnSync(join(root, 'scripts', 'build-image.sh'), [IMAGE, EXEC_IMAGE], {
    cwd: root,
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  return built.status === 0
    ? undefined
    : `scripts/build-image.sh failed: ${(built.stderr || built.stdout).slice(-800)}`;
}

const need = { group: 'production image tests', requirement: 'docker' as const };
const why = needs(need) === false ? unavailable() : 'docker';
const skip = countSkipped(need, why ? `${why} (apt-get install docker.io, start dockerd)` : false);
const test = (name: string, fn: () => Promise<void>) => nodeTest(name, { skip }, fn);

const docker = async (...args: string[]) => (await run('docker', args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
/** `docker run --rm` of `image` with a read-only root filesystem and the writable paths mounted. */
const readOnlyRun = (image: string, ...args: string[]) =>
  docker(
    'run',
    '--rm',
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/var/lib/dreact:uid=10001,gid=10001',
    image,
    ...args,
  );

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

const containers: string[] = [];
let db: Db;

describe('the production images', { skip }, () => {
  before(async () => {
    db = openDb({ schema: uniqueId('t_image').toLowerCase() });
  });
  after(async () => {
    for (const id of containers) await docker('rm', '-f', id).catch(() => undefined);
    await dropSchema(db).catch(() => undefined);
    await db.close();
  });

  test('runs as the non-root user dreact (10001), the exec image too', async () => {
    for (const image of [IMAGE, EXEC_IMAGE]) {
      assert.equal(await docker('run', '--rm', '--entrypoint', 'id', image, '-u'), '10001', image);
      const config = JSON.parse(await docker('image', 'inspect', image)) as Array<{ Config: { User: string } }>;
      assert.equal(config[0]!.Config.User, '10001:10001');
    }
  });

  test('read-only root filesystem: a write outside DREACT_HOME and /tmp fails, inside them it works', async () => {
    const script = `const fs = require('node:fs');
for (const p of ['/app/x', '/etc/x', '/var/lib/dreact/x', '/tmp/x']) {
  try { fs.writeFileSync(p, 'x'); console.log(p + ' ok'); } catch (e) { console.log(p + ' ' + e.code); }
}`;
    const out = await readOnlyRun(IMAGE, 'node', '-e', script);
    assert.deepEqual(out.split('\n'), ['/app/x EROFS', '/etc/x EROFS', '/var/lib/dreact/x ok', '/tmp/x ok']);
  });

  test('the exec image has bubblewrap and python3; the worker image has neither', async () => {
    const out = await readOnlyRun(EXEC_IMAGE, 'sh', '-c', 'bwrap --version && python3 --version');
    assert.match(out, /^bubblewrap \d/m);
    assert.match(out, /^Python 3\./m);
    const plain = await readOnlyRun(IMAGE, 'sh', '-c', 'command -v bwrap python3 || echo none');
    assert.equal(plain, 'none');
  });

  test('the worker in the container starts, polls and runs a turn (read-only, host network on loopback)', async () => {
    assert.ok(process.env.TEMPORAL_ADDRESS, 'the test run provides a Temporal server (npm test)');
    const taskQueue = uniqueId('tq-image');
    const t0 = Date.now();
    const id = await docker(
      'run',
      '-d',
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/var/lib/dreact:uid=10001,gid=10001',
      '-e',
      `TEMPORAL_ADDRESS=${process.env.TEMPORAL_ADDRESS}`,
      '-e',
      `DATABASE_URL=${db.databaseUrl}`,
      '-e',
      `DREACT_DB_SCHEMA=${db.schema}`,
      '-e',
      `DREACT_TASK_QUEUE=${taskQueue}`,
      IMAGE,
    );
    containers.push(id);
    const logs = spawn('docker', ['logs', '-f', id]);
    const seen: string[] = [];
    const polling = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no polling line in 120 s: ${seen.join('')}`)), 120_000);
      const onData = (chunk: Buffer) => {
        seen.push(chunk.toString());
        if (/\[worker\] polling/.test(seen.join(''))) {
          clearTimeout(timer);
          resolve(Date.now() - t0);
        }
      };
      logs.stdout.on('data', onData);
      logs.stderr.on('data', onData);
      logs.once('exit', () => reject(new Error(`the container stopped: ${seen.join('')}`)));
    }).finally(() => logs.kill());
    console.log(`# image cold start (docker run → worker polling): ${polling} ms`);

    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    try {
      const client = new DreactClient(new Client({ connection }), { taskQueue });
      const conv = uniqueId('conv');
      const started = await client.startTurn(conv, 'hello from the image test', {
        model: { provider: 'scripted', script: { rounds: [complete('Hello from a read-only container.')] } },
      });
      const result = await client.result(conv, started.turnIndex);
      assert.equal(result.answer, 'Hello from a read-only container.');
    } finally {
      await connection.close();
    }
    const state = JSON.parse(await docker('inspect', id)) as Array<{ State: { Running: boolean } }>;
    assert.equal(state[0]!.State.Running, true, 'still running after the turn');
  });

  test('the gateway entry point serves /healthz, and the health command says so', async () => {
    const port = await freePort();
    const id = await docker(
      'run',
      '-d',
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/var/lib/dreact:uid=10001,gid=10001',
      '-e',
      `TEMPORAL_ADDRESS=${process.env.TEMPORAL_ADDRESS}`,
      '-e',
      `DATABASE_URL=${db.databaseUrl}`,
      '-e',
      `DREACT_DB_SCHEMA=${db.schema}`,
      '-e',
      'DREACT_API_KEYS=image-test-key',
      '-e',
      'DREACT_GATEWAY_HOST=127.0.0.1',
      '-e',
      `DREACT_GATEWAY_PORT=${port}`,
      IMAGE,
      'node',
      'dist/gateway.cjs',
    );
    containers.push(id);
    const url = `http://127.0.0.1:${port}/healthz`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(url).catch(() => undefined);
      if (res?.ok) break;
      if (Date.now() > deadline) throw new Error(`${url} did not answer: ${await docker('logs', id)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(await docker('exec', id, 'node', 'bin/healthcheck.cjs', url), '');
    const down = await run('docker', [
      'exec',
      id,
      'node',
      'bin/healthcheck.cjs',
      `http://127.0.0.1:${port}/nothing`,
    ]).then(
      () => 0,
      (err: { code?: number }) => err.code,
    );
    assert.equal(down, 1, 'a failing health URL exits 1');
  });
});
