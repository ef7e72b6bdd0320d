/**
 * The Fargate exec backend through the real AWS SDKs (@aws-sdk/client-ecs, client-s3,
 * s3-request-presigner) against the loopback ECS and S3 stand-ins; the task's container is the
 * Python entrypoint run as a real process.
 */
import { after as nodeAfter, before as nodeBefore, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { RunTaskCommand } from '@aws-sdk/client-ecs';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startFargateEnv, makeSpec, type FargateEnv } from '../support/fargate-env';
import { awaitExec } from '../../activities/exec/fargate/poll';
import { createFargateBackend } from '../../activities/exec/fargate/backend';
import { classifyAwsError } from '../../activities/exec/fargate/errors';
import { downloadOutputs, jobKeys, readTaskResult, TaskResultSchema } from '../../activities/exec/fargate/staging';
import { STOP_REASON_TIMEOUT } from '../../core/exec/ecs-task-status';
import { requiring, whenMet } from '../support/requirements';

// The Fargate stand-in runs the executor container under bubblewrap: skips without it (counted in
// npm test's summary); required under CI.
const sandbox = {
  group: 'Fargate exec tests (container stand-in under bubblewrap)',
  requirement: 'bubblewrap',
} as const;
const test = requiring(nodeTest, sandbox);
const before = whenMet(nodeBefore, sandbox);
const after = whenMet(nodeAfter, sandbox);

let env: FargateEnv;
before(async () => {
  env = await startFargateEnv();
});
after(async () => {
  await env.close();
});

const fast = { initialPollMs: 50, maxPollMs: 200 };

test('a fargate exec end to end: workspace in, outputs out, exit code, log tail, usage; the task holds no credentials', async () => {
  const code = [
    'import os, json',
    'rows = open("data/input.csv").read().splitlines()',
    'print("rows", len(rows))',
    'print("aws env", sorted(k for k in os.environ if k.startswith("AWS")))',
    'print("job url in program env", "DREACT_JOB_URL" in os.environ)',
    `print("sees worker files", os.path.exists(${JSON.stringify(join(__dirname, '../../package.json'))}), os.path.exists("/etc/shadow"), "uid", os.getuid())`,
    'out = os.environ["OUTPUT_DIR"]',
    'open(os.path.join(out, "report.md"), "w").write("# total %d\\n" % sum(int(r) for r in rows))',
    'os.makedirs(os.path.join(out, "charts"))',
    'json.dump({"n": len(rows)}, open(os.path.join(out, "charts", "stats.json"), "w"))',
  ].join('\n');
  const spec = makeSpec('wf-e2e/round-1/call-0', code, { 'data/input.csv': '1\n2\n3\n', 'notes.txt': 'hello' });
  try {
    const handle = await env.backend.start(spec);
    assert.match(handle.ref, /^arn:aws:ecs:us-east-1:\d+:task\/dreact\//);
    const states: string[] = [];
    const status = await awaitExec(env.backend, handle, {
      ...fast,
      heartbeat: ({ status: s }) => states.push(s.state),
    });
    assert.equal(status.state, 'exited');
    assert.equal(status.exitCode, 0);
    assert.ok(states.includes('starting'), `saw ${states.join(',')}`);
    const collected = await env.backend.collect(handle, spec);
    assert.deepEqual(collected.outputFiles, [
      { path: 'report.md', sizeBytes: 10 },
      { path: 'charts/stats.json', sizeBytes: 8 },
    ]);
    assert.equal(readFileSync(join(spec.outputDir, 'report.md'), 'utf8'), '# total 6\n');
    assert.deepEqual(JSON.parse(readFileSync(join(spec.outputDir, 'charts/stats.json'), 'utf8')), { n: 3 });
    assert.match(collected.logTail, /rows 3/);
    assert.match(collected.logTail, /aws env \[\]/);
    assert.match(collected.logTail, /job url in program env False/);
    assert.match(collected.logTail, /sees worker files False False uid 65534/);
    assert.deepEqual(collected.infraErrors, []);
    // One minute minimum at 1 vCPU / 2 GB.
    assert.equal(collected.usage?.vcpuSeconds, 60);
    assert.equal(collected.usage?.gbSeconds, 120);
    assert.ok(Math.abs((collected.usage?.costUsd ?? 0) - (60 * 0.04048 + 120 * 0.004445) / 3600) < 1e-12);
    // Everything the task fetched or wrote went through presigned URLs; only the worker signed headers.
    const taskRequests = env.s3.requests.filter((r) => r.mode === 'query');
    assert.ok(taskRequests.length >= 5, `task made ${taskRequests.length} presigned requests`);
    assert.ok(taskRequests.every((r) => r.status === 200));
    // The RunTask parameters: FARGATE, awsvpc without public IP, subnets and security groups from config, tags.
    const req = env.ecs.runTaskRequests.at(-1)!;
    assert.equal(req.launchType, 'FARGATE');
    assert.deepEqual(req.networkConfiguration, {
      awsvpcConfiguration: {
        subnets: ['subnet-0private'],
        securityGroups: ['sg-0noegress'],
        assignPublicIp: 'DISABLED',
      },
    });
    assert.equal(String(req.clientToken).length, 64);
    assert.ok(String(req.startedBy).length <= 36);
    assert.deepEqual(
      (req.tags as Array<{ key: string; value: string }>).find((t) => t.key === 'dreact:workflow-id')?.value,
      'conv/conv_fargate/turn/0',
    );
  } finally {
    spec.cleanup();
  }
});

test('presigned URLs grant exactly their object: a tampered signature or another key is refused', async () => {
  const spec = makeSpec('wf-presign/round-1/call-0', 'print(1)');
  try {
    const handle = await env.backend.start(spec);
    await awaitExec(env.backend, handle, fast);
    const jobUrl = (
      env.ecs.runTaskRequests.at(-1)!.overrides as {
        containerOverrides: Array<{ environment: Array<{ value: string }> }>;
      }
    ).containerOverrides[0]!.environment[0]!.value;
    assert.equal((await fetch(jobUrl)).status, 200);
    assert.equal(
      (
        await fetch(
          jobUrl.replace(/X-Amz-Signature=([0-9a-f])/, (_m, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`),
        )
      ).status,
      403,
    );
    assert.equal((await fetch(jobUrl.replace('job.json', 'main.py'))).status, 403);
    assert.equal((await fetch(jobUrl, { method: 'PUT', body: 'x' })).status, 403);
  } finally {
    spec.cleanup();
  }
});

test('a retried launch with the same clientToken returns the same task: one task runs', async () => {
  const spec = makeSpec(
    'wf-retry/round-2/call-1',
    'open(__import__("os").environ["OUTPUT_DIR"] + "/once.txt", "a").write("x")',
  );
  const launchDate = new Date();
  // Two attempts of one activity share their first schedule time; each builds its own SDK clients.
  const attempt1 = env.newBackend({ launchDate: () => launchDate });
  const attempt2 = env.newBackend({ launchDate: () => launchDate });
  try {
    const before = { ...env.ecs.stats };
    const h1 = await attempt1.launch(spec);
    const h2 = await attempt2.launch(spec);
    assert.equal(h2.ref, h1.ref);
    assert.equal(env.ecs.stats.runTaskCalls - before.runTaskCalls, 2);
    assert.equal(env.ecs.stats.tasksCreated - before.tasksCreated, 1);
    // And a later attempt re-attaches through ListTasks(startedBy) without calling RunTask.
    assert.deepEqual(await attempt2.start(spec), h1);
    assert.equal(env.ecs.stats.runTaskCalls - before.runTaskCalls, 2);
    await awaitExec(attempt2, h1, fast);
    const collected = await attempt2.collect(h1, spec);
    assert.deepEqual(collected.outputFiles, [{ path: 'once.txt', sizeBytes: 1 }]);
  } finally {
    spec.cleanup();
  }
});

test('a retry whose manifest URL changed (new signing time) gets ConflictException and re-attaches to the task', async () => {
  const spec = makeSpec('wf-conflict/round-1/call-0', 'print("ok")');
  try {
    const before = { ...env.ecs.stats };
    const h1 = await env.newBackend({ launchDate: () => new Date(Date.now() - 5000) }).launch(spec);
    const h2 = await env.newBackend({ launchDate: () => new Date() }).launch(spec);
    assert.equal(h2.ref, h1.ref);
    assert.equal(env.ecs.stats.tasksCreated - before.tasksCreated, 1);
    await awaitExec(env.backend, h1, fast);
  } finally {
    spec.cleanup();
  }
});

test('cancellation stops the task with StopTask; the log written before the stop is collected', async () => {
  const spec = makeSpec(
    'wf-cancel/round-1/call-0',
    'import time\nprint("started", flush=True)\ntime.sleep(60)\nprint("never")',
  );
  try {
    const handle = await env.backend.start(spec);
    const ac = new AbortController();
    const stopsBefore = env.ecs.stats.stopTaskCalls;
    let steered = false;
    const waiting = awaitExec(env.backend, handle, {
      ...fast,
      signal: ac.signal,
      heartbeat: ({ status }) => {
        // A steer arrives while the program runs (after it printed its first line).
        if (status.state === 'running' && !steered) {
          steered = true;
          setTimeout(() => ac.abort(new Error('steer')), 700);
        }
      },
    });
    await assert.rejects(waiting, /steer/);
    assert.equal(env.ecs.stats.stopTaskCalls - stopsBefore, 1);
    const status = await env.backend.status(handle);
    assert.equal(status.state, 'killed');
    assert.match(status.reason ?? '', /dreact: cancelled \(steer\)/);
    const collected = await env.backend.collect(handle, spec);
    assert.match(collected.logTail, /started/);
    assert.doesNotMatch(collected.logTail, /never/);
    await env.backend.stop(handle, 'again'); // idempotent
  } finally {
    spec.cleanup();
  }
});

test('timeouts: the deadline stops the task as timed out; the entrypoint kills a program past its wall time (exit 124)', async () => {
  const slow = makeSpec('wf-deadline/round-1/call-0', 'import time\ntime.sleep(60)');
  const walltime = makeSpec(
    'wf-walltime/round-1/call-0',
    'import time\nprint("working", flush=True)\ntime.sleep(60)',
    {},
    { wallTimeMs: 500 },
  );
  try {
    const h = await env.backend.start(slow);
    const status = await awaitExec(env.backend, h, { ...fast, deadlineMs: Date.now() + 1500 });
    assert.equal(status.state, 'timed_out');
    assert.match(status.reason ?? '', new RegExp(STOP_REASON_TIMEOUT));

    const h2 = await env.backend.start(walltime);
    const s2 = await awaitExec(env.backend, h2, fast);
    assert.equal(s2.state, 'timed_out');
    assert.equal(s2.exitCode, 124);
    const c2 = await env.backend.collect(h2, walltime);
    assert.equal(c2.status.state, 'timed_out');
    assert.match(c2.logTail, /working/);
  } finally {
    slow.cleanup();
    walltime.cleanup();
  }
});

test('stoppedReason mapped: a container that cannot start is failed_to_start with the ECS reason; a runtime error keeps its traceback and exit code', async () => {
  const broken = env.newBackend({ config: { ...env.config, taskDefinition: 'broken-image' } });
  const spec = makeSpec('wf-broken/round-1/call-0', 'print(1)');
  const failing = makeSpec('wf-raise/round-1/call-0', 'def f():\n    raise ValueError("bad input")\nf()');
  try {
    const h = await broken.start(spec);
    const status = await awaitExec(broken, h, fast);
    assert.equal(status.state, 'failed_to_start');
    assert.match(status.reason ?? '', /CannotStartContainerError/);
    const collected = await broken.collect(h, spec);
    assert.ok(
      collected.infraErrors.some((e) => /failed to start: .*CannotStartContainerError/.test(e)),
      collected.infraErrors.join('|'),
    );

    const h2 = await env.backend.start(failing);
    const s2 = await awaitExec(env.backend, h2, fast);
    assert.deepEqual([s2.state, s2.exitCode], ['exited', 1]);
    assert.match(s2.reason ?? '', /Essential container in task exited/);
    const c2 = await env.backend.collect(h2, failing);
    assert.match(c2.logTail, /Traceback[\s\S]*ValueError: bad input/);
  } finally {
    spec.cleanup();
    failing.cleanup();
  }
});

test('the 8 KB override limit holds with a large workspace: the overrides carry one URL', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 150; i++) files[`data/part-${String(i).padStart(3, '0')}.txt`] = `${i}\n`.repeat(2000);
  const spec = makeSpec(
    'wf-large/round-1/call-0',
    'import os\nn = sum(len(fs) for _, _, fs in os.walk("data"))\nprint("files", n, "bytes", sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk("data") for f in fs))',
    files,
  );
  try {
    const handle = await env.backend.start(spec);
    const overrides = env.ecs.runTaskRequests.at(-1)!.overrides;
    const bytes = Buffer.byteLength(JSON.stringify(overrides));
    assert.ok(bytes < 2048, `overrides are ${bytes} bytes`);
    await awaitExec(env.backend, handle, fast);
    const collected = await env.backend.collect(handle, spec);
    const expected = Object.values(files).reduce((n, c) => n + c.length, 0);
    assert.match(collected.logTail, new RegExp(`files 150 bytes ${expected}`));
    assert.ok(expected > 8192 * 100);
  } finally {
    spec.cleanup();
  }
});

test('ECS rejects overrides over 8 KB (the stand-in as ECS does), classified non-retryable; bad credentials are non-retryable', async () => {
  const big = {
    containerOverrides: [{ name: 'executor', environment: [{ name: 'PAYLOAD', value: 'x'.repeat(9000) }] }],
  };
  const err = await env.backend.ecs
    .send(
      new RunTaskCommand({
        cluster: 'dreact',
        taskDefinition: 'dreact-executor',
        launchType: 'FARGATE',
        networkConfiguration: { awsvpcConfiguration: { subnets: ['s'] } },
        overrides: big,
      }),
    )
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.equal((err as Error).name, 'InvalidParameterException');
  assert.match((err as Error).message, /8192/);
  const failure = classifyAwsError('ECS RunTask', err) as ApplicationFailure;
  assert.equal(failure.nonRetryable, true);

  const wrongKey = createFargateBackend({
    config: env.config,
    credentials: { accessKeyId: 'AKIDDREACTTEST', secretAccessKey: 'wrong' },
  });
  const spec = makeSpec('wf-creds/round-1/call-0', 'print(1)');
  try {
    const e2 = await wrongKey.find(spec).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(e2 instanceof ApplicationFailure);
    assert.equal(e2.type, 'aws.InvalidSignatureException');
    assert.equal(e2.nonRetryable, true);
  } finally {
    spec.cleanup();
  }
});

test('output caps and links: files over the count cap and symlinks are dropped with a reason', async () => {
  const code = [
    'import os',
    'out = os.environ["OUTPUT_DIR"]',
    'for i in range(5): open(os.path.join(out, "f%d.txt" % i), "w").write("x" * 10)',
    'os.symlink("/etc/passwd", os.path.join(out, "link.txt"))',
  ].join('\n');
  const spec = makeSpec('wf-caps/round-1/call-0', code, {}, { maxOutputFiles: 3 });
  try {
    const handle = await env.backend.start(spec);
    await awaitExec(env.backend, handle, fast);
    const collected = await env.backend.collect(handle, spec);
    assert.deepEqual(
      collected.outputFiles.map((f) => f.path),
      ['f0.txt', 'f1.txt', 'f2.txt'],
    );
    assert.deepEqual(collected.dropped, [
      { path: 'f3.txt', reason: 'over the output file cap (3)' },
      { path: 'f4.txt', reason: 'over the output file cap (3)' },
      { path: 'link.txt', reason: 'not a regular file' },
    ]);
  } finally {
    spec.cleanup();
  }
});

test('a forged result.json (the task is untrusted) cannot write outside the output dir or past the caps', async () => {
  const spec = makeSpec('wf-forged/round-1/call-0', 'print(1)', {}, { maxOutputFiles: 2, maxOutputBytes: 4 });
  const keys = jobKeys(env.config, spec.execId);
  const put = (Key: string, Body: string) =>
    env.backend.s3.send(new PutObjectCommand({ Bucket: env.config.bucket, Key, Body }));
  try {
    await put(keys.slot(0), 'evil');
    await put(keys.slot(1), 'ok');
    const forged = {
      execId: spec.execId,
      exitCode: 0,
      timedOut: false,
      files: [
        { slot: 0, path: '../../escape.txt', size: 4 },
        { slot: 0, path: '/etc/cron.d/x', size: 4 },
        { slot: 1, path: 'a.txt', size: 99 },
        { slot: 1, path: 'b.txt', size: 2 },
        { slot: 0, path: 'c.txt', size: 4 },
        { slot: 7, path: 'd.txt', size: 1 },
      ],
      dropped: [],
      infraErrors: [],
    };
    const result = TaskResultSchema.parse(forged);
    const { outputFiles, dropped } = await downloadOutputs(env.backend.s3, env.config, spec, result);
    assert.deepEqual(outputFiles, [{ path: 'b.txt', sizeBytes: 2 }]);
    assert.deepEqual(
      dropped.map((d) => [d.path, d.reason]),
      [
        ['../../escape.txt', 'unsafe path'],
        ['/etc/cron.d/x', 'unsafe path'],
        ['a.txt', 'uploaded 2 bytes, the task reported 99'],
        ['c.txt', 'over the output byte cap (4)'],
        ['d.txt', 'over the output file cap (2)'],
      ],
    );
    assert.deepEqual(readdirSync(spec.outputDir), ['b.txt']);
    // A result that is not JSON, or of another exec, is reported, not thrown (a retry cannot fix it).
    await put(keys.result, '{not json');
    assert.match((await readTaskResult(env.backend.s3, env.config, spec.execId)).problem ?? '', /is not JSON/);
    await put(keys.result, JSON.stringify({ ...forged, execId: 'other' }));
    assert.match(
      (await readTaskResult(env.backend.s3, env.config, spec.execId)).problem ?? '',
      /belongs to exec other/,
    );
    assert.equal(existsSync(join(spec.outputDir, '../../escape.txt')), false);
  } finally {
    spec.cleanup();
  }
});
