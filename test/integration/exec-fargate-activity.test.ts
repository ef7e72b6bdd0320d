/**
 * The Fargate backend inside an activity context (MockActivityEnvironment, real SDKs, stand-ins):
 * a retried attempt re-attaches through the handle in its heartbeat details without listing tasks;
 * two attempts sign the manifest at the activity's first schedule time, so their RunTask
 * parameters are identical and the clientToken returns one task; the owning workflow is tagged.
 * And a program that ignores SIGTERM is killed at the stop timeout, its missing result reported.
 */
import { after as nodeAfter, before as nodeBefore, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startFargateEnv, makeSpec, type FargateEnv } from '../support/fargate-env';
import { awaitExec } from '../../activities/exec/fargate/poll';
import type { ExecHandle } from '../../activities/exec/backend';
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
  env = await startFargateEnv({ stopTimeoutMs: 500 });
});
after(async () => {
  await env.close();
});

const fast = { initialPollMs: 50, maxPollMs: 200 };
const workflowExecution = { workflowId: 'conv/c1/turn/3', runId: 'run-1' };

test('in an activity: same first-schedule time → identical RunTask → one task; a retried attempt re-attaches from its heartbeat', async () => {
  const spec = makeSpec('conv/c1/turn/3#r2#0', 'print("once")');
  const scheduledTimestampMs = Date.now() - 2000;
  try {
    const before = { ...env.ecs.stats };
    const attempt = (n: number, heartbeatDetails?: unknown) =>
      new MockActivityEnvironment({
        attempt: n,
        scheduledTimestampMs,
        currentAttemptScheduledTimestampMs: Date.now(),
        workflowExecution,
        heartbeatDetails,
      });
    const backend = env.newBackend();
    const h1 = (await attempt(1).run(() => backend.launch(spec))) as ExecHandle;
    const h2 = (await attempt(2).run(() => env.newBackend().launch(spec))) as ExecHandle;
    assert.equal(h2.ref, h1.ref);
    assert.equal(env.ecs.stats.tasksCreated - before.tasksCreated, 1);
    const [r1, r2] = env.ecs.runTaskRequests.slice(-2);
    assert.deepEqual(r2, r1, 'a retried launch sends byte-identical parameters');
    assert.deepEqual(
      (r1!.tags as Array<{ key: string; value: string }>).find((t) => t.key === 'dreact:workflow-id')?.value,
      'conv/c1/turn/3',
    );

    const listsBefore = env.ecs.calls.ListTasks ?? 0;
    const h3 = await attempt(3, { handle: h1 satisfies ExecHandle }).run(() => env.newBackend().start(spec));
    assert.deepEqual(h3, h1);
    assert.equal((env.ecs.calls.ListTasks ?? 0) - listsBefore, 0, 're-attached from the heartbeat, no ListTasks');
    assert.equal(env.ecs.stats.runTaskCalls - before.runTaskCalls, 2);
    await awaitExec(backend, h1, fast);
    assert.match((await backend.collect(h1, spec)).logTail, /^once\n$/);
  } finally {
    spec.cleanup();
  }
});

test('a program that ignores SIGTERM is SIGKILLed at the stop timeout; the missing result is an infra error', async () => {
  const spec = makeSpec(
    'conv/c1/turn/3#r3#0',
    'import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint("stubborn", flush=True)\ntime.sleep(60)',
  );
  try {
    const handle = await env.backend.start(spec);
    await awaitExec(env.backend, handle, { ...fast, deadlineMs: Date.now() + 1500 });
    const collected = await env.backend.collect(handle, spec);
    assert.equal(collected.status.state, 'timed_out');
    assert.equal(collected.status.exitCode, 137);
    assert.deepEqual(collected.outputFiles, []);
    assert.ok(
      collected.infraErrors.some((e) => /the task wrote no result/.test(e)),
      collected.infraErrors.join('|'),
    );
  } finally {
    spec.cleanup();
  }
});

test('a huge stdout: only the tail (limits.maxLogBytes) is kept and read back', async () => {
  const spec = makeSpec('conv/c1/turn/3#r4#0', 'for i in range(20000): print("line", i)\nprint("THE END")');
  try {
    const handle = await env.backend.start(spec);
    await awaitExec(env.backend, handle, fast);
    const { logTail, status } = await env.backend.collect(handle, spec);
    assert.equal(status.state, 'exited');
    assert.ok(logTail.length <= spec.limits.maxLogBytes && logTail.length > 3000, String(logTail.length));
    assert.match(logTail, /line 19999\nTHE END\n$/);
    assert.doesNotMatch(logTail, /line 0\n/);
  } finally {
    spec.cleanup();
  }
});

test('a retry long after the first schedule signs the manifest afresh (a URL signed then would have expired)', async () => {
  const spec = makeSpec('conv/c1/turn/3#r5#0', 'print("fresh")');
  const sevenHoursAgo = new Date(Date.now() - 7 * 3600_000);
  try {
    const backend = env.newBackend({ launchDate: () => sevenHoursAgo });
    const handle = await backend.start(spec);
    const status = await awaitExec(backend, handle, fast);
    assert.deepEqual([status.state, status.exitCode], ['exited', 0]);
    assert.match((await backend.collect(handle, spec)).logTail, /fresh/);
  } finally {
    spec.cleanup();
  }
});
