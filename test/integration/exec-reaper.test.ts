/**
 * The exec reaper on a real Temporal dev server: a Schedule runs ExecReaperWorkflow on the worker,
 * whose activity stops the Fargate task (ECS stand-in) of a turn workflow that has ended and leaves
 * the task of a turn that still runs.
 */
import { after as nodeAfter, before as nodeBefore, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { startFargateEnv, makeSpec, type FargateEnv } from '../support/fargate-env';
import { ensureExecReaperSchedule } from '../../workers/exec-reaper-schedule';
import { REAPED_REASON_PREFIX } from '../../activities/exec/fargate/reaper';
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

let stack: TestStack;
let env: FargateEnv;
before(async () => {
  stack = await createTestStack('reaper');
  env = await startFargateEnv();
  await stack.startWorker({ fargate: env.backend });
});
after(async () => {
  await stack.teardown();
  await env.close();
});

test('the reaper schedule stops the task of an ended turn and spares the task of a running one', async () => {
  const client = stack.server.env.client;
  // An "ended turn": a workflow that was terminated. A "running turn": one on a queue nobody polls.
  const endedId = uniqueId('conv/ended/turn');
  const runningId = uniqueId('conv/running/turn');
  const ended = await client.workflow.start('NoopRoundsWorkflow', {
    taskQueue: uniqueId('nobody-polls'),
    workflowId: endedId,
    args: [0],
  });
  await ended.terminate('the turn ended');
  await client.workflow.start('NoopRoundsWorkflow', {
    taskQueue: uniqueId('nobody-polls'),
    workflowId: runningId,
    args: [1],
  });

  const sleeper = 'import time\nprint("up", flush=True)\ntime.sleep(120)';
  const orphanSpec = makeSpec(uniqueId('exec-orphan'), sleeper);
  const liveSpec = makeSpec(uniqueId('exec-live'), sleeper);
  const strayId = uniqueId('conv/never-existed/turn');
  const straySpec = makeSpec(uniqueId('exec-stray'), sleeper);
  const orphan = await env.newBackend({ workflowIdOf: () => endedId }).start(orphanSpec);
  const live = await env.newBackend({ workflowIdOf: () => runningId }).start(liveSpec);
  const stray = await env.newBackend({ workflowIdOf: () => strayId }).start(straySpec);
  try {
    await waitFor('the tasks running', async () => {
      const states = await Promise.all([orphan, live, stray].map(async (h) => (await env.backend.status(h)).state));
      return states.every((s) => s === 'running');
    });

    const scheduleId = uniqueId('reaper');
    assert.equal(
      await ensureExecReaperSchedule(client, { taskQueue: stack.taskQueue, scheduleId, every: '60 minutes' }),
      scheduleId,
    );
    // Idempotent: a second call (another worker starting) updates the same schedule.
    assert.equal(
      await ensureExecReaperSchedule(client, { taskQueue: stack.taskQueue, scheduleId, every: '60 minutes' }),
      scheduleId,
    );
    const schedule = client.schedule.getHandle(scheduleId);
    try {
      await schedule.trigger();
      const stopped = await waitFor('the orphan task stopped', async () => {
        const s = await env.backend.status(orphan);
        return s.state === 'killed' ? s : undefined;
      });
      assert.match(
        stopped.reason ?? '',
        new RegExp(`^${REAPED_REASON_PREFIX}: turn workflow ${endedId.replace(/[/]/g, '\\/')} is TERMINATED`),
      );
      const runs = await waitFor('the reaper run recorded', async () => {
        const d = await schedule.describe();
        return d.info.recentActions.length > 0 ? d.info.recentActions : undefined;
      });
      const run = client.workflow.getHandle(
        runs[0]!.action.workflow.workflowId,
        runs[0]!.action.workflow.firstExecutionRunId,
      );
      const report = (await run.result()) as {
        checked: number;
        stopped: Array<{ taskArn: string; workflowId: string }>;
      };
      assert.deepEqual(
        report.stopped.map((s) => [s.taskArn, s.workflowId]).sort(),
        [
          [orphan.ref, endedId],
          [stray.ref, strayId],
        ].sort(),
      );
      assert.equal(report.checked, 3);
      assert.match((await env.backend.status(stray)).reason ?? '', /turn workflow .* no longer exists/);
      assert.equal((await env.backend.status(live)).state, 'running');
      const collected = await env.backend.collect(orphan, orphanSpec);
      assert.match(collected.logTail, /up/);
    } finally {
      await schedule.delete();
    }
  } finally {
    await env.backend.stop(live, 'test over');
    await client.workflow.getHandle(runningId).terminate('test over');
    orphanSpec.cleanup();
    liveSpec.cleanup();
    straySpec.cleanup();
  }
});
