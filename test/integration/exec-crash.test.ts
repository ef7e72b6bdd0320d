/**
 * kill -9 of the worker during an exec, then a new worker: the retried await activity re-attaches
 * to the same sandbox (found by exec id), which kept running; the program ran once, its output is
 * stored once, and the turn completes. Runs the real worker process (workers/main.ts) on the local
 * bubblewrap backend.
 */
import { after as nodeAfter, before as nodeBefore, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { complete, createTestStack, decision, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { spawnWorkerProcess } from '../support/worker-process';
import { getArtifact, loadBlocks } from '../../store/timeline-store';
import { execIdFor } from '../../core/exec';
import { execScratch } from '../support/exec';
import { turnWorkflowId } from '../../core/turn/contracts';
import { requiring, whenMet } from '../support/requirements';

// Runs code in the local (bubblewrap) sandbox: skips without it (counted in npm test's summary); required under CI.
const sandbox = { group: 'exec sandbox tests (local backend, bubblewrap)', requirement: 'bubblewrap' } as const;
const test = requiring(nodeTest, sandbox);
const before = whenMet(nodeBefore, sandbox);
const after = whenMet(nodeAfter, sandbox);

const root = execScratch('exec-crash');
const stateRoot = path.join(root, 'state');
let stack: TestStack;
before(async () => {
  stack = await createTestStack('execcrash');
});
after(async () => {
  await stack.teardown();
  rmSync(root, { recursive: true, force: true });
});

function spawnWorker(): ChildProcess {
  return spawnWorkerProcess(stack, {
    DREACT_EXEC_BACKEND: 'local',
    DREACT_EXEC_STATE_DIR: stateRoot,
    DREACT_EXEC_WORK_DIR: path.join(root, 'work'),
  });
}

test('kill -9 of the worker during an exec: the new worker re-attaches; one execution, outputs written once', async () => {
  const conv = uniqueId('conv');
  const code =
    'import os, time\nprint("started", flush=True)\ntime.sleep(4)\nopen(os.path.join(os.environ["OUTPUT_DIR"], "runs.txt"), "a").write("run\\n")\nprint("finished")\n';
  const exec =
    thinking('run') +
    decision({
      action: 'call_tool',
      notes: 'exec',
      tool_call: {
        tool_id: 'exec.python',
        params: { contract: [{ filename: 'runs.txt', description: 'one line per run', visibility: 'internal' }] },
      },
    }) +
    `<channel:code>${code}</channel:code>`;
  let worker = spawnWorker();
  await stack.client.startTurn(conv, 'run it', {
    model: { provider: 'scripted', script: { rounds: [exec, complete('survived')] } },
  });
  const call = await waitFor(
    'the exec call',
    async () => (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call'),
    60_000,
  );
  const execId = execIdFor(conv, call.call_id!);
  await waitFor('the sandbox to start', async () => existsSync(path.join(stateRoot, execId, 'pid')), 30_000);
  // The await activity's heartbeats carry the sandbox handle.
  const details = await waitFor(
    'execAwait heartbeats with the handle',
    async () => {
      const d = await stack.server.env.client.workflow.getHandle(turnWorkflowId(conv, 1)).describe();
      const pending = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'execAwait');
      const payload = pending?.heartbeatDetails?.payloads?.[0]?.data;
      const parsed = payload
        ? (JSON.parse(Buffer.from(payload).toString('utf8')) as { handle?: { execId?: string; backend?: string } })
        : undefined;
      return parsed?.handle ? parsed : undefined;
    },
    15_000,
  );
  assert.deepEqual({ execId: details.handle!.execId, backend: details.handle!.backend }, { execId, backend: 'local' });
  worker.kill('SIGKILL');
  await new Promise((r) => worker.once('exit', r));
  assert.equal(
    existsSync(path.join(stateRoot, execId, 'exit')),
    false,
    'the exec was still running when the worker died',
  );
  worker = spawnWorker();
  try {
    const result = await stack.client.result(conv, 1);
    assert.equal(result.answer, 'survived');
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
  const blocks = await loadBlocks(stack.db.pool, conv);
  const res = blocks.filter((b) => b.type === 'react.tool.result');
  assert.equal(res.length, 1);
  assert.equal(res[0]!.meta.ok, true, res[0]!.text);
  assert.match(res[0]!.text!, /started\nfinished/);
  const artifact = await getArtifact(stack.db.pool, conv, 'file', 'turn_1/outputs/runs.txt');
  assert.equal(artifact?.content, 'run\n', 'the program ran once');
  assert.deepEqual(
    readdirSync(stateRoot).filter((d) => d.startsWith('ex-')),
    [execId],
    'one sandbox for the exec id',
  );
});
