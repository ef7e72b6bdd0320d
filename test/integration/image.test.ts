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
import { complete, decision, thinking, uniqueId } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
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
/** A container's whole output: `docker logs` replays its stdout and its stderr (where node writes errors). */
const containerLogs = async (id: string) => {
  const { stdout, stderr } = await run('docker', ['logs', id], { maxBuffer: 16 * 1024 * 1024 });
  const state = await docker('inspect', '-f', '{{.State.Status}} exit={{.State.ExitCode}}', id).catch(() => '?');
  return `[container ${state}]\n${stdout}${stderr}`.trim();
};
/** `docker run --rm` (options, then the image and its command) read-only, the writable paths mounted. */
const readOnlyRun = (...args: string[]) =>
  docker('run', '--rm', '--read-only', '--tmpfs', '/tmp', '--tmpfs', '/var/lib/dreact:uid=10001,gid=10001', ...args);

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

const containers: string[] = [];
let db: Db;

/** A worker container on `taskQueue` (host network, read-only), once it polls: its id and cold start. */
async function startWorker(
  image: string,
  taskQueue: string,
  extra: string[] = [],
): Promise<{ id: string; ms: number }> {
  const t0 = Date.now();
  // The image's health endpoint (0.0.0.0:8081) on a port of its own: workers of several tests share
  // the host network while the suite runs.
  const healthPort = await freePort();
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
    `DREACT_HEALTH_ADDR=127.0.0.1:${healthPort}`,
    ...extra,
    '-e',
    `TEMPORAL_ADDRESS=${process.env.TEMPORAL_ADDRESS}`,
    '-e',
    `DATABASE_URL=${db.databaseUrl}`,
    '-e',
    `DREACT_DB_SCHEMA=${db.schema}`,
    '-e',
    `DREACT_TASK_QUEUE=${taskQueue}`,
    image,
  );
  containers.push(id);
  const logs = spawn('docker', ['logs', '-f', id]);
  const seen: string[] = [];
  const ms = await new Promise<number>((resolve, reject) => {
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
  return { id, ms };
}

/** A turn of the scripted model on `taskQueue` through the client API: its conversation and answer. */
async function scriptedTurn(taskQueue: string, rounds: string[]): Promise<{ conv: string; answer: string }> {
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  try {
    const client = new DreactClient(new Client({ connection }), { taskQueue });
    const conv = uniqueId('conv');
    const started = await client.startTurn(conv, 'hello from the image test', {
      model: { provider: 'scripted', script: { rounds } },
    });
    return { conv, answer: (await client.result(conv, started.turnIndex)).answer };
  } finally {
    await connection.close();
  }
}

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
    const { id, ms } = await startWorker(IMAGE, taskQueue);
    console.log(`# image cold start (docker run → worker polling): ${ms} ms`);
    const { answer } = await scriptedTurn(taskQueue, [complete('Hello from a read-only container.')]);
    assert.equal(answer, 'Hello from a read-only container.');
    const state = JSON.parse(await docker('inspect', id)) as Array<{ State: { Running: boolean } }>;
    assert.equal(state[0]!.State.Running, true, 'still running after the turn');
  });

  test("the exec image's sandbox needs what the chart grants: user namespaces and an unmasked /proc", async () => {
    const probe = ['bwrap', '--unshare-all', '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534'];
    probe.push(
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      'python3',
      '-c',
      'import os; print(os.getuid())',
    );
    const attempt = (...opts: string[]) =>
      readOnlyRun(...opts, EXEC_IMAGE, ...probe).then(
        (out) => out,
        (err: { stderr?: string }) => `failed: ${err.stderr ?? ''}`,
      );
    assert.match(
      await attempt(),
      /failed: .*create new namespace/,
      'the default seccomp profile refuses user namespaces',
    );
    assert.match(
      await attempt('--security-opt', 'seccomp=unconfined'),
      /failed: .*mount proc/,
      'a masked /proc refuses',
    );
    assert.equal(
      await attempt('--security-opt', 'seccomp=unconfined', '--security-opt', 'systempaths=unconfined'),
      '65534',
      'with both (the chart: seccompProfile Unconfined, procMount Unmasked) the code runs as nobody',
    );
  });

  test('the exec role in its image runs exec.python in a turn, in the bubblewrap sandbox', async () => {
    const taskQueue = uniqueId('tq-image-exec');
    const sandboxNeeds = ['--security-opt', 'seccomp=unconfined', '--security-opt', 'systempaths=unconfined'];
    await startWorker(EXEC_IMAGE, taskQueue, sandboxNeeds);
    const code = [
      'import os',
      'open(os.path.join(os.environ["OUTPUT_DIR"], "answer.txt"), "w").write(str(6 * 7))',
      'print("wrote it")',
    ].join('\n');
    const exec =
      thinking('run code') +
      decision({
        action: 'call_tool',
        notes: 'exec',
        tool_call: {
          tool_id: 'exec.python',
          params: { contract: [{ filename: 'answer.txt', description: 'the answer', visibility: 'external' }] },
        },
      }) +
      `<channel:code>${code}</channel:code>`;
    const { conv, answer } = await scriptedTurn(taskQueue, [exec, complete('42')]);
    assert.equal(answer, '42');
    const result = (await loadBlocks(db.pool, conv)).find(
      (b) => b.type === 'react.tool.result' && b.meta.tool_id === 'exec.python',
    );
    assert.equal(result?.meta.ok, true, result?.text);
    assert.equal(result?.meta.backend, 'local');
    assert.match(result!.text!, /Program log \(tail\):\nwrote it/);
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
      if (Date.now() > deadline) throw new Error(`${url} did not answer: ${await containerLogs(id)}`);
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
