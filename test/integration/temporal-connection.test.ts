/**
 * One way to connect, end to end through the CLI a user runs (`dreact doctor`, `dreact turn`) on the
 * run's real Temporal dev server: every doctor check green with a worker polling (and no secret in
 * the text or the JSON); a second namespace created here, missing the search attributes — the
 * doctor prints the exact command, which is then run and turns the check green — and a turn run
 * there with the address from a temporal.toml profile and TEMPORAL_NAMESPACE; an unknown namespace,
 * an unreachable address and TLS refusals (a real TLS endpoint with openssl-made certificates in
 * front of the server) each one clear line naming the setting, for the client and the worker.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DreactWorker } from '../../workers/role-workers';
import { msToTs } from '@temporalio/common/lib/time';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import {
  makeTestCertificates,
  startTlsEndpoint,
  type TestCertificates,
  type TlsEndpoint,
} from '../support/tls-endpoint';
import { findTemporalCli } from '../../apps/stack/temporal-cli';
import { freePort } from '../../apps/stack/ports';
import { createWorker } from '../../workers/worker';
import {
  connectTemporalClient,
  connectTemporalWorker,
  resolveTemporalConnection,
} from '../../client/temporal/connection';
import type { DoctorReport } from '../../client/temporal/doctor';

let stack: TestStack;
let certs: TestCertificates;
let mtls: TlsEndpoint;
const SECRET_KEY = `tk_${'s3cr3t'.repeat(6)}`;
const SECRET_META = 'meta-secret-value-42';

before(async () => {
  stack = await createTestStack('connect');
  await stack.startWorker();
  certs = makeTestCertificates();
  mtls = await startTlsEndpoint(certs, stack.server.address, { mtls: true });
});

after(async () => {
  await mtls?.close();
  certs?.remove();
  await stack?.teardown();
});

/** `dreact doctor --json` with `env` (the run's TEMPORAL_ADDRESS removed unless given). */
async function doctorJson(env: NodeJS.ProcessEnv, args: string[] = []) {
  const run = await runDreact([...args, 'doctor', '--json'], { env: { TEMPORAL_ADDRESS: undefined, ...env } });
  return { run, report: JSON.parse(run.stdout) as DoctorReport };
}

const check = (r: DoctorReport, name: string) => {
  const c = r.checks.find((x) => x.name === name || x.name.startsWith(`${name} `));
  assert.ok(c, `check ${name} in ${JSON.stringify(r.checks)}`);
  return c;
};

test('doctor against the dev server with a worker polling: every check green, sources named, no secret printed', async () => {
  const env = {
    ...stackCliEnv(stack),
    TEMPORAL_API_KEY: SECRET_KEY,
    TEMPORAL_TLS: 'false', // the dev server is plaintext; the key still travels as a bearer header
    TEMPORAL_GRPC_META_X_SECRET: SECRET_META,
  };
  const { run, report } = await doctorJson(env);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.equal(report.ok, true);
  for (const c of report.checks) assert.equal(c.status, 'ok', `${c.name}: ${c.detail}`);
  assert.match(check(report, 'task queue').detail, /[1-9]\d* workflow pollers?, [1-9]\d* activity pollers?/);
  assert.match(check(report, 'search attributes').detail, /ConversationId, TurnIndex, TurnStatus/);
  const by = Object.fromEntries(report.connection.settings.map((s) => [s.setting, s]));
  assert.equal(by.address!.source, 'env');
  assert.equal(by.address!.from, 'TEMPORAL_ADDRESS');
  assert.equal(by.namespace!.source, 'default');
  assert.match(by.apiKey!.value, /^set \(sha256:[0-9a-f]{8}\)$/);
  assert.equal(by.metadata!.value, 'x-secret=(set)');
  const text = await runDreact(['doctor'], { env: { TEMPORAL_ADDRESS: undefined, ...env } });
  assert.equal(text.code, 0, text.stdout + text.stderr);
  assert.match(text.stdout, /apiKey +set \(sha256:[0-9a-f]{8}\) +\(env: TEMPORAL_API_KEY\)/);
  assert.match(text.stdout, /All checks passed\./);
  for (const out of [run.stdout, run.stderr, text.stdout, text.stderr]) {
    assert.ok(!out.includes(SECRET_KEY), 'the API key is never printed');
    assert.ok(!out.includes(SECRET_META), 'gRPC metadata values are never printed');
  }
});

test('a second namespace: the doctor names the missing search attributes and the exact command, which fixes them; a turn runs there with the address from a temporal.toml profile', async () => {
  const namespace = uniqueId('dreact-ns').toLowerCase().replace(/_/g, '-');
  const c = stack.server.env.connection;
  await c.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const config = join(certs.dir, 'temporal.toml');
  writeFileSync(config, `[profile.second]\naddress = "${stack.server.address}"\n`);
  const env = {
    ...stackCliEnv(stack),
    TEMPORAL_ADDRESS: undefined,
    TEMPORAL_CONFIG_FILE: config,
    TEMPORAL_PROFILE: 'second',
    TEMPORAL_NAMESPACE: namespace,
  };
  const missing = await waitFor('the new namespace in the doctor', async () => {
    const { report } = await doctorJson(env);
    return check(report, 'namespace').status === 'ok' ? report : undefined;
  });
  assert.equal(missing.ok, false);
  const sa = check(missing, 'search attributes');
  assert.equal(sa.status, 'fail');
  assert.match(
    sa.detail,
    new RegExp(`missing on namespace "${namespace}": ConversationId \\(Keyword\\), TurnIndex \\(Int\\)`),
  );
  const command = sa.fix!.find((f) => f.startsWith('temporal operator search-attribute create'))!;
  assert.ok(command, JSON.stringify(sa.fix));
  const by = Object.fromEntries(missing.connection.settings.map((s) => [s.setting, s]));
  assert.equal(by.address!.source, 'profile');
  assert.equal(by.address!.from, `address of profile "second" in ${config}`);
  assert.equal(by.namespace!.source, 'env');

  // The printed command, run as printed (plus the address: the temporal CLI reads its own settings).
  const cli = findTemporalCli();
  assert.ok(cli, 'the Temporal CLI that runs the dev server');
  const argv = command.split(' ').slice(1);
  execFileSync(cli, [...argv, '--address', stack.server.address], { stdio: 'pipe' });
  const fixed = await waitFor('the registered search attributes', async () => {
    const { report } = await doctorJson(env);
    return check(report, 'search attributes').status === 'ok' ? report : undefined;
  });
  assert.equal(check(fixed, 'task queue').status, 'fail', 'no worker on the new namespace yet');
  assert.match(check(fixed, 'task queue').detail, /no worker polls its workflow and activity tasks/);

  // A worker on that namespace; the CLI's turn reaches it through the profile's address.
  const worker: DreactWorker = await createWorker({
    connection: stack.server.env.nativeConnection,
    namespace,
    db: stack.db,
    taskQueue: stack.taskQueue,
    defaultModel: { provider: 'scripted' },
  });
  const running = worker.run();
  try {
    const turn = await runDreact(['turn', 'hello from the second namespace', '--json'], { env });
    assert.equal(turn.code, 0, turn.stderr);
    const result = JSON.parse(turn.stdout) as { workflowId: string; completionPath: string; answer: string };
    assert.equal(result.completionPath, 'complete');
    // The turn ran on that namespace, not on default.
    const desc = await c.workflowService.describeWorkflowExecution({
      namespace,
      execution: { workflowId: result.workflowId },
    });
    assert.ok(desc.workflowExecutionInfo, 'the turn is in the second namespace');
    const green = await doctorJson(env);
    assert.equal(green.run.code, 0, green.run.stdout);
    // A flag wins over the variable (and names itself).
    const flagged = await doctorJson(env, ['--namespace', 'default']);
    const ns = flagged.report.connection.settings.find((s) => s.setting === 'namespace')!;
    assert.deepEqual([ns.value, ns.source, ns.from], ['default', 'flag', '--namespace']);
  } finally {
    worker.shutdown();
    await running;
  }
});

test('an unknown namespace and an unreachable address: exit 1, one line naming the setting', async () => {
  const unknown = await doctorJson({ TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: 'no-such-ns' });
  assert.equal(unknown.run.code, 1);
  const ns = check(unknown.report, 'namespace');
  assert.equal(ns.status, 'fail');
  assert.match(
    ns.detail,
    /^Temporal at \S+: unknown namespace "no-such-ns" \(TEMPORAL_NAMESPACE\): fix the name, or create it/,
  );
  assert.equal(check(unknown.report, 'search attributes').status, 'skipped');
  // A flag after the command works too.
  const flagged = await runDreact(['doctor', '--json', '--namespace', 'no-such-ns'], {
    env: { TEMPORAL_ADDRESS: stack.server.address },
  });
  assert.match(
    check(JSON.parse(flagged.stdout) as DoctorReport, 'namespace').detail,
    /unknown namespace "no-such-ns" \(--namespace\)/,
  );
  // A command stops with the same line.
  const turn = await runDreact(['turn', 'hi'], { env: { ...stackCliEnv(stack), TEMPORAL_NAMESPACE: 'no-such-ns' } });
  assert.equal(turn.code, 1);
  assert.match(
    turn.stderr.trim(),
    /^dreact: Temporal at \S+: unknown namespace "no-such-ns" \(TEMPORAL_NAMESPACE\)[^\n]*$/,
  );

  const port = await freePort(47_000);
  const text = await runDreact(['doctor'], { env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}` } });
  assert.equal(text.code, 1);
  const line = text.stdout.split('\n').find((l) => l.includes('FAIL'))!;
  assert.match(
    line,
    new RegExp(
      `server: Temporal at 127\\.0\\.0\\.1:${port} is unreachable \\(.*ECONNREFUSED.*\\): check TEMPORAL_ADDRESS`,
    ),
  );
  assert.ok(!/\n\s+at /.test(text.stdout + text.stderr), 'no stack trace');
});

test('TLS: mTLS through a real TLS endpoint is green; an untrusted server, a missing or foreign client certificate are one line each, client and worker alike', async () => {
  const address = mtls.address.replace('127.0.0.1', 'localhost');
  const good = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
    DREACT_TASK_QUEUE: stack.taskQueue,
  };
  const ok = await doctorJson(good);
  assert.equal(ok.run.code, 0, ok.run.stdout);
  assert.match(check(ok.report, 'server').detail, /\(mTLS\)/);
  const key = readFileSync(certs.clientKey, 'utf8');
  const keyBody = key.split('\n')[1]!;
  assert.ok(!ok.run.stdout.includes(keyBody), 'the client key is never printed');
  assert.ok(ok.run.stdout.includes(certs.clientKey), 'its path is');

  // The worker process stops its start with the line (no stack).
  // (Spawned, not spawnSync: the TLS endpoint answers from this process.)
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: join(__dirname, '..', '..'),
    env: {
      ...process.env,
      ...stackCliEnv(stack),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca,
      DREACT_WORKER_STATE_DIR: 'off',
      DREACT_EXEC_BACKEND: 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  clearTimeout(killer);
  const worker = { status, stderr };
  assert.equal(worker.status, 1, worker.stderr);
  assert.match(
    worker.stderr,
    /\[worker\] fatal: Temporal at localhost:\d+: the server requires a client certificate \(mTLS\): set TEMPORAL_TLS_CLIENT_CERT_PATH[^\n]*\n?$/,
  );
  assert.ok(!/\n\s+at /.test(worker.stderr), 'no stack trace');

  const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'no CA',
      { TEMPORAL_ADDRESS: address, TEMPORAL_TLS: 'true' },
      /the server's certificate is not trusted: set TEMPORAL_TLS_SERVER_CA_CERT_PATH/,
    ],
    [
      'another CA',
      { ...good, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCa },
      /not signed by the CA in TEMPORAL_TLS_SERVER_CA_CERT_PATH \(.*otherca\.pem\)/,
    ],
    [
      'no client certificate',
      { TEMPORAL_ADDRESS: address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca },
      /the server requires a client certificate \(mTLS\): set TEMPORAL_TLS_CLIENT_CERT_PATH .* and TEMPORAL_TLS_CLIENT_KEY_PATH/,
    ],
    [
      'a foreign client certificate',
      {
        ...good,
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.foreignClientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.foreignClientKey,
      },
      /the server refused the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH \(.*foreign\.pem\)/,
    ],
    [
      'plaintext to the TLS port',
      { TEMPORAL_ADDRESS: address },
      /the server speaks TLS but this connection does not: turn it on \(TEMPORAL_TLS=true/,
    ],
    [
      'TLS to the plaintext port',
      { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_TLS: 'true' },
      /TLS is on but the server does not speak TLS: turn it off \(TEMPORAL_TLS=false\)/,
    ],
  ];
  for (const [what, env, re] of cases) {
    const { run, report } = await doctorJson(env);
    assert.equal(run.code, 1, what);
    const server = check(report, 'server');
    assert.equal(server.status, 'fail', what);
    assert.match(server.detail, re, what);
    assert.ok(!server.detail.includes('\n'), `${what}: one line`);
    // The worker's transport (the SDK core) says the same.
    const resolved = resolveTemporalConnection({ env: env as Record<string, string> });
    await assert.rejects(connectTemporalWorker(resolved), (err: Error) => re.test(err.message), `${what} (worker)`);
    await assert.rejects(
      connectTemporalClient(resolved, { connectTimeout: '2 seconds' }),
      (err: Error) => re.test(err.message),
      `${what} (client)`,
    );
  }
});
