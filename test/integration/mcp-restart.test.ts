/**
 * A worker process killed with SIGKILL during an MCP call: the next worker (its journal releases
 * the dead attempt) connects to the agent's MCP server again and retries the call; the timeline
 * records both attempts and the result says it came from a retry (calls are not assumed idempotent).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { stdioServerConfig } from '../support/mcp-servers';
import { spawnWorkerProcess } from '../../bench/worker-process';
import { loadBlocks } from '../../store/timeline-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('mcprestart');
});
after(async () => stack.teardown());

test('kill -9 during an MCP call: the restarted worker retries it on a new connection; both attempts recorded', async () => {
  const agents = mkdtempSync(join(tmpdir(), 'dreact-mcp-kill-'));
  writeFileSync(
    join(agents, 'killer.yaml'),
    stringify({ name: 'killer', mcp: { servers: { local: stdioServerConfig() } } }),
  );
  const env = {
    TEMPORAL_ADDRESS: stack.server.address,
    DREACT_DB_SCHEMA: stack.db.schema,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_TASK_QUEUE: stack.taskQueue,
    DREACT_WORKER_STATE_DIR: mkdtempSync(join(tmpdir(), 'dreact-state-')),
    DREACT_AGENTS_DIR: agents,
  };
  let worker = spawnWorkerProcess(env, { from: 'sources' });
  await worker.ready;
  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(
    conv,
    'sleep through a crash',
    {
      model: {
        provider: 'scripted',
        script: { rounds: [callTool('mcp.local.sleep', { ms: 3000 }), complete('after the crash')] },
      },
    },
    undefined,
    undefined,
    undefined,
    'killer',
  );
  await waitFor('the MCP call to start', async () =>
    (await loadBlocks(stack.db.pool, conv)).some((b) => b.type === 'stage.mcp.attempt'),
  );
  worker.child.kill('SIGKILL');
  await worker.exited;
  worker = spawnWorkerProcess(env, { from: 'sources' });
  try {
    await worker.ready;
    const result = await stack.client.result(conv, started.turnIndex);
    assert.match(result.answer, /after the crash/);
    const blocks = await loadBlocks(stack.db.pool, conv);
    assert.deepEqual(
      blocks.filter((b) => b.type === 'stage.mcp.attempt').map((b) => b.meta.attempt),
      [1, 2],
    );
    const res = blocks.find((b) => b.type === 'react.tool.result')!;
    assert.equal(res.meta.ok, true, res.text);
    assert.equal(res.meta.attempt, 2);
    assert.match(res.text!, /^slept 3000 ms/);
    assert.match(res.text!, /attempt 2: an earlier attempt did not finish and may have reached the server/);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
