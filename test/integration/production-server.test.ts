/**
 * The production Temporal server (scripts/temporal-production: `go.temporal.io/server` v1.29.1,
 * frontend, two history hosts, matching and the system worker as separate processes on Postgres,
 * mTLS on the frontend and JWT authorization), driven through the surfaces a user touches, every
 * connection made from the standard TEMPORAL_* settings (client/temporal/connection.ts): the
 * worker is a `dist/worker.cjs` process with a client certificate and an API key (a JWT signed
 * with the key set the script serves); a turn runs through `dreact turn`, through `dreact gateway`
 * over HTTP and through the web chat in chromium; a wrong client certificate, a missing API key
 * and a key without the namespace's permission are each refused with one line naming the setting;
 * a history host killed with SIGKILL mid-turn and started again loses and doubles nothing.
 * The model is the Anthropic API emulator through the real SDK (note turns: test/support/note-turns.ts).
 *
 * Needs the built server (.ci/run: `npm run temporal:production -- install`); skips outside CI
 * without it. The dev server the rest of the suite uses is not touched.
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { DreactClient } from '../../client/api';
import { connectTemporalClient, resolveTemporalConnection } from '../../client/temporal/connection';
import { freePort } from '../../apps/stack/ports';
import { startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { auditNoteTurns, isDecisionRequest, noteReply, NOTES_ANSWER } from '../support/note-turns';
import { spawnWorkerProcess, type WorkerProcess } from '../../bench/worker-process';
import { runDreact } from '../support/dreact-cli';
import { uniqueId, waitFor } from '../support/stack';
import { needs, requiring } from '../support/requirements';
import { NEED_CHROMIUM, launchChromium } from '../support/browser';
import {
  NEED_TEMPORAL_SERVER,
  productionEnv,
  startProductionTestTemporal,
  type ProductionTemporal,
} from '../support/production-temporal';
import { temporalTomlProfile } from '../../scripts/temporal-production/config';

const skip = needs(NEED_TEMPORAL_SERVER);
const available = skip === false;
const test = requiring(nodeTest, NEED_TEMPORAL_SERVER);

const ROUNDS = 3;
const GATEWAY_KEY = 'prod-gateway-key';

let cluster: ProductionTemporal;
let db: Db;
let emulator: AnthropicEmulator;
let worker: WorkerProcess;
let connection: Connection;
let api: DreactClient;
let taskQueue: string;
let gateway: { child: ChildProcess; url: string; log: () => string } | undefined;

/** What a worker, the CLI and the gateway get: the cluster's TEMPORAL_* plus this file's database and queue. */
const appEnv = (override: Record<string, string | undefined> = {}) =>
  productionEnv(cluster, {
    DATABASE_URL: db.databaseUrl,
    DREACT_DB_SCHEMA: db.schema,
    DREACT_TASK_QUEUE: taskQueue,
    ...override,
  });

const workerEnv = (override: Record<string, string | undefined> = {}) =>
  appEnv({
    ANTHROPIC_API_KEY: 'prod-test',
    ANTHROPIC_BASE_URL: emulator.baseURL,
    DREACT_LOG_LEVEL: 'WARN',
    DREACT_WORKER_STATE_DIR: join(tmpdir(), uniqueId('dreact-prod-worker')),
    ...override,
  });

before(async () => {
  if (!available) return;
  cluster = await startProductionTestTemporal();
  db = openDb({ schema: uniqueId('t_prodserver').toLowerCase() });
  await migrate(db);
  taskQueue = uniqueId('tq-prod');
  emulator = await startAnthropicEmulator({ pace: { firstTokenMs: 150, tokensPerSecond: 400 } });
  emulator.respond((req) => noteReply(req.body, ROUNDS));
  worker = spawnWorkerProcess(workerEnv());
  await worker.ready;
  connection = await connectTemporalClient(resolveTemporalConnection({ env: cluster.env }));
  api = new DreactClient(new Client({ connection, namespace: cluster.namespace }), { taskQueue });
});

after(async () => {
  if (!available) return;
  gateway?.child.kill('SIGTERM');
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await connection?.close();
  await emulator?.stop();
  if (db) {
    await dropSchema(db);
    await db.close();
  }
  await cluster?.stop();
});

/** The single non-empty line a refused command printed (fails with everything it printed otherwise). */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line, not:\n${stderr}`);
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  return lines[0]!;
}

test('a turn through `dreact turn` on the production server: mTLS + API key from TEMPORAL_*, the worker a dist/worker.cjs process', async () => {
  const run = await runDreact(['turn', 'write the notes', '--provider', 'anthropic', '--json'], { env: appEnv() });
  assert.equal(run.code, 0, run.stderr);
  const out = JSON.parse(run.stdout.trim()) as {
    answer: string;
    rounds: number;
    conversationId: string;
    workflowId: string;
  };
  assert.equal(out.answer, NOTES_ANSWER);
  assert.equal(out.rounds, ROUNDS);
  // It ran on this cluster's namespace, visible through the client with the same settings.
  const described = await api.temporal.workflow.getHandle(out.workflowId).describe();
  assert.equal(described.status.name, 'COMPLETED');
  const audit = await auditNoteTurns(db.pool, [out.conversationId], ROUNDS);
  assert.deepEqual(audit.problems, []);
});

test('the same settings as a temporal.toml profile (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE) reach the cluster', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'dreact-toml-')), 'temporal.toml');
  writeFileSync(file, temporalTomlProfile(cluster.env, 'production'));
  const resolved = resolveTemporalConnection({ env: { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'production' } });
  assert.equal(resolved.address, cluster.address);
  assert.equal(resolved.namespace, cluster.namespace);
  const viaProfile = await connectTemporalClient(resolved);
  try {
    const client = new Client({ connection: viaProfile, namespace: resolved.namespace });
    const turns = await client.workflow.count('ConversationId != ""');
    assert.ok(turns.count >= 0);
  } finally {
    await viaProfile.close();
  }
});

async function startGateway(): Promise<NonNullable<typeof gateway>> {
  if (gateway) return gateway;
  const port = await freePort(0);
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', '..', 'bin', 'dreact.cjs'), 'gateway', '--port', String(port), '--host', '127.0.0.1'],
    {
      env: {
        ...process.env,
        DREACT_HOME: mkdtempSync(join(tmpdir(), 'dreact-home-')),
        NO_COLOR: '1',
        ...appEnv({ DREACT_API_KEYS: GATEWAY_KEY }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += String(d)));
  child.stderr!.on('data', (d: Buffer) => (log += String(d)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'the gateway to listen',
    async () => log.includes(`gateway: ${url}`) || child.exitCode !== null,
    60_000,
  );
  assert.equal(child.exitCode, null, log);
  gateway = { child, url, log: () => log };
  return gateway;
}

test('a turn through `dreact gateway` over HTTP on the production server', async () => {
  const gw = await startGateway();
  const conv = uniqueId('prodgw');
  const started = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': GATEWAY_KEY },
    body: JSON.stringify({ prompt: 'write the notes' }),
  });
  assert.equal(started.status, 202, await started.clone().text());
  const { turnIndex } = (await started.json()) as { turnIndex: number };
  const result = await api.result(conv, turnIndex);
  assert.equal(result.answer, NOTES_ANSWER);
  const timeline = await fetch(`${gw.url}/v1/conversations/${conv}/timeline`, {
    headers: { 'x-api-key': GATEWAY_KEY },
  });
  assert.equal(timeline.status, 200);
  assert.match(await timeline.text(), /All notes are written\./);
  assert.deepEqual((await auditNoteTurns(db.pool, [conv], ROUNDS)).problems, []);
});

const chromiumSkip = available ? needs(NEED_CHROMIUM) : skip;

test('a turn through the web chat (chromium) on the production server', { skip: chromiumSkip }, async () => {
  const gw = await startGateway();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(gw.url);
    await page.getByLabel('API key').fill(GATEWAY_KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByLabel('message').fill('write the notes');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.msg.assistant:not([data-live])', { hasText: NOTES_ANSWER });
    await answer.first().waitFor({ timeout: 90_000 });
    assert.ok(
      (await page.locator('.tool-card summary', { hasText: 'react.write' }).count()) >= 1,
      'the tool cards show',
    );
  } finally {
    await browser.close();
  }
});

test('refusals, each one line naming the setting: a client certificate from another CA, no API key, a key without the namespace', async () => {
  const rogue = await runDreact(['turn', 'hi', '--json'], {
    env: appEnv({
      TEMPORAL_TLS_CLIENT_CERT_PATH: cluster.certs.rogueClientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: cluster.certs.rogueClientKey,
    }),
  });
  assert.notEqual(rogue.code, 0);
  assert.match(
    oneLine(rogue.stderr),
    /refused the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH \(.*rogue-client\.pem\)/,
  );

  const noKey = await runDreact(['turn', 'hi', '--json'], { env: appEnv({ TEMPORAL_API_KEY: undefined }) });
  assert.notEqual(noKey.code, 0);
  assert.match(oneLine(noKey.stderr), /TEMPORAL_API_KEY/);

  const noPermission = await runDreact(['turn', 'hi', '--json'], {
    env: appEnv({ TEMPORAL_API_KEY: cluster.tokens.noPermission }),
  });
  assert.notEqual(noPermission.code, 0);
  const line = oneLine(noPermission.stderr);
  assert.match(line, /refused the API key in TEMPORAL_API_KEY/);
  assert.match(line, /namespace "dreact"/);
  assert.ok(!line.includes(cluster.tokens.noPermission), 'the key itself is never printed');

  // A worker with an expired key stops before polling, with the same kind of line.
  const expired = spawnWorkerProcess(workerEnv({ TEMPORAL_API_KEY: cluster.tokens.expired }));
  await assert.rejects(expired.ready, /the worker exited/);
  assert.notEqual(await expired.exited, 0);
  assert.match(expired.log(), /refused the API key in TEMPORAL_API_KEY/);
  assert.doesNotMatch(expired.log(), /^\s+at /m, 'no stack trace');
  assert.ok(!expired.log().includes(cluster.tokens.expired), 'the key itself is never printed');
});

test('a history host killed with SIGKILL mid-turn and started again: every turn completes, nothing is duplicated or lost', async () => {
  const convs = Array.from({ length: 6 }, () => uniqueId('prodkill'));
  const before = emulator.requests.length;
  const started = await Promise.all(
    convs.map((c) => api.startTurn(c, 'write the notes', { maxRounds: ROUNDS + 2, model: { provider: 'anthropic' } })),
  );
  // Mid-turn: the first rounds of most turns answered, none of the turns finished.
  await waitFor(
    'the first rounds to be answered',
    async () =>
      emulator.requests.slice(before).filter((r) => isDecisionRequest(r.body) && r.answeredAt !== undefined).length >=
      4,
    60_000,
    20,
  );
  await cluster.kill('history', 0);
  assert.equal(cluster.processes().find((p) => p.service === 'history' && p.index === 0)?.running, false);
  await new Promise((r) => setTimeout(r, 1000));
  await cluster.restart('history', 0);
  let overdue: NodeJS.Timeout | undefined;
  const results = await Promise.race([
    Promise.all(started.map((s, i) => api.result(convs[i]!, s.turnIndex))),
    new Promise<never>((_, reject) => {
      overdue = setTimeout(
        () => reject(new Error(`turns still running after 150 s:\n${cluster.logTail('history', 0)}`)),
        150_000,
      );
    }),
  ]).finally(() => clearTimeout(overdue));
  for (const r of results) {
    assert.equal(r.answer, NOTES_ANSWER);
    assert.equal(r.rounds, ROUNDS);
  }
  const audit = await auditNoteTurns(db.pool, convs, ROUNDS);
  assert.deepEqual(audit.problems, []);
  assert.deepEqual([audit.duplicateBlocks, audit.duplicateEffects, audit.missingEffects], [0, 0, 0]);
});
