/**
 * A worker killed with SIGKILL while a subagent's turn runs: the next worker process picks both
 * turns up — the child's round is retried, the parent keeps waiting on the same child — and both
 * complete with nothing duplicated (one child workflow and run, one prompt, one answer, one result
 * for the delegate call).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { scriptedWorkerEnv, startScriptedWorker } from '../support/scripted-worker-process';
import { loadBlocks } from '../../store/timeline-store';
import { subagentConversationId, subagentWorkflowId } from '../../core/agents/subagents';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('subagent_restart');
});
after(async () => stack.teardown());

const scripts = {
  'kill-lead': {
    rounds: [callTool('agent.delegate', { agent: 'kill-child', task: 'Count slowly.' }), complete('lead done')],
  },
  'kill-child': {
    rounds: [thinking('counting '.repeat(80)) + complete('child done')],
    chunkSize: 4,
    latencyMs: 40,
  },
};

test('kill -9 while the subagent runs: both turns complete, nothing duplicated', async () => {
  const env = scriptedWorkerEnv(stack, { 'kill-lead': 'subagents: [kill-child]\n', 'kill-child': '' }, scripts);
  let worker = startScriptedWorker(env);
  await worker.ready;
  const conv = uniqueId('conv');
  try {
    await stack.client.startTurn(conv, 'Delegate the counting.', {}, undefined, undefined, undefined, 'kill-lead');
    const call = await waitFor('the delegate call', async () =>
      (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call'),
    );
    const child = subagentConversationId(conv, call.call_id!);
    await waitFor('the child to stream', async () => {
      const r = await stack.db.pool.query(
        `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
        [child],
      );
      return r.rows[0].n > 3;
    });
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = startScriptedWorker(env);
    await worker.ready;

    const result = await stack.client.result(conv, 1);
    assert.equal(result.answer, 'lead done');
    assert.equal(result.subagents, 1);
    const temporal = stack.server.env.client.workflow;
    const childId = subagentWorkflowId(conv, call.call_id!);
    const childResult = await temporal.getHandle<() => Promise<{ answer: string }>>(childId).result();
    assert.match(childResult.answer, /^child done/);

    // One child workflow, one run; the parent started it once.
    const runs = [];
    for await (const w of temporal.list({ query: `WorkflowId = '${childId}'` })) runs.push(w);
    assert.equal(runs.length, 1);
    const history = await temporal.getHandle(`conv/${conv}/turn/1`).fetchHistory();
    const starts = (history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
    assert.equal(
      starts.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === childId).length,
      1,
    );

    // The child's round was retried after the kill, and its timeline holds one prompt and one answer.
    const childHistory = await temporal.getHandle(childId).fetchHistory();
    assert.ok(
      (childHistory.events ?? []).some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1),
      'the child ran an activity again after the kill',
    );
    const childBlocks = await loadBlocks(stack.db.pool, child);
    assert.equal(childBlocks.filter((b) => b.type === 'user.prompt').length, 1);
    assert.equal(childBlocks.filter((b) => b.type === 'assistant.completion').length, 1);
    const parentBlocks = await loadBlocks(stack.db.pool, conv);
    assert.equal(parentBlocks.filter((b) => b.type === 'react.tool.result' && b.call_id === call.call_id).length, 1);
    const turns = await stack.db.pool.query(`SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1`, [child]);
    assert.equal(turns.rows[0].n, 1);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
