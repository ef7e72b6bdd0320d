/**
 * A background subagent survives worker kills (SIGKILL) at both of its stages: while its subagent's
 * turn runs, and while its answer is being delivered — the worker dies after the followup reached
 * the parent conversation and before the task row was closed (held by a row lock here), so the next
 * worker's retry signals again. One delivery, one new parent turn, one subagent run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { scriptedWorkerEnv, startScriptedWorker } from '../support/scripted-worker-process';
import { loadBlocks } from '../../store/timeline-store';
import { subagentConversationId, subagentWorkflowId } from '../../core/agents/subagents';
import { backgroundTaskId, backgroundTaskWorkflowId } from '../../core/agents/background';
import { loadBackgroundTask } from '../../store/background-task-store';
import { turnWorkflowId } from '../../core/turn/ids';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('subagent_bg_restart');
});
after(async () => stack.teardown());

const scripts = {
  'bgk-lead': {
    rounds: [complete('unused')],
    turns: [
      [
        callTool('agent.delegate', { agent: 'bgk-child', task: 'Count slowly.', wait: false }),
        complete('lead: started'),
      ],
      [complete('lead: got the count')],
    ],
  },
  'bgk-child': { rounds: [thinking('counting '.repeat(80)) + complete('child: counted')], chunkSize: 4, latencyMs: 40 },
};

test('kill -9 while the background subagent runs and again while its answer is delivered: one delivery, one turn', async () => {
  const env = scriptedWorkerEnv(stack, { 'bgk-lead': 'subagents: [bgk-child]\n', 'bgk-child': '' }, scripts);
  let worker = startScriptedWorker(env);
  await worker.ready;
  const conv = uniqueId('conv');
  const lock = await stack.db.pool.connect();
  let locked = false;
  try {
    await stack.client.startTurn(conv, 'Count in the background.', {}, undefined, undefined, undefined, 'bgk-lead');
    assert.equal((await stack.client.result(conv, 1)).answer, 'lead: started');
    const call = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call')!;
    const callId = call.call_id!;
    const taskId = backgroundTaskId(callId);
    const child = subagentConversationId(conv, callId);

    // Stage 1: the subagent's turn streams; the worker dies.
    await waitFor('the background subagent to stream', async () => {
      const r = await stack.db.pool.query(
        `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
        [child],
      );
      return r.rows[0].n > 3;
    });
    worker.child.kill('SIGKILL');
    await worker.exited;

    // Stage 2: the delivery's close of the task row waits on this lock, after its followup went out.
    await lock.query('BEGIN');
    await lock.query(`SELECT 1 FROM background_tasks WHERE conversation_id = $1 AND task_id = $2 FOR UPDATE`, [
      conv,
      taskId,
    ]);
    locked = true;
    worker = startScriptedWorker(env);
    await worker.ready;
    await waitFor('the followup to reach the parent', async () => {
      const view = await stack.client.conversationState(conv);
      return view.nextTurnIndex > 2;
    });
    await waitFor('the delivery to wait on the task row', async () => {
      const r = await stack.db.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE background_tasks%'`,
      );
      return r.rows[0].n > 0;
    });
    worker.child.kill('SIGKILL');
    await worker.exited;
    await lock.query('ROLLBACK');
    locked = false;
    worker = startScriptedWorker(env);
    await worker.ready;

    const outcome = await stack.server.env.client.workflow
      .getHandle<() => Promise<{ status: string; delivered: boolean }>>(backgroundTaskWorkflowId(conv, callId))
      .result();
    assert.deepEqual(
      { status: outcome.status, delivered: outcome.delivered },
      { status: 'completed', delivered: true },
    );
    assert.equal((await stack.client.result(conv, 2)).answer, 'lead: got the count');

    // The delivery ran again after the kill (and its second followup was dropped by the conversation).
    const taskHistory = await stack.server.env.client.workflow
      .getHandle(backgroundTaskWorkflowId(conv, callId))
      .fetchHistory();
    assert.ok(
      (taskHistory.events ?? []).some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1),
      'the delivery was retried after the kill',
    );
    // One delivery, one new parent turn; one subagent turn with one answer.
    const prompts = (await loadBlocks(stack.db.pool, conv)).filter(
      (b) => b.type === 'user.prompt' && String(b.text).startsWith('[BACKGROUND TASK]'),
    );
    assert.equal(prompts.length, 1);
    assert.match(prompts[0]!.text ?? '', /child: counted/);
    const view = await stack.client.conversationState(conv);
    assert.equal(view.nextTurnIndex, 3);
    assert.equal(view.queued, 0);
    const turns = await stack.db.pool.query(`SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1`, [conv]);
    assert.equal(turns.rows[0].n, 2);
    const childBlocks = await loadBlocks(stack.db.pool, child);
    assert.equal(childBlocks.filter((b) => b.type === 'assistant.completion').length, 1);
    const runs = [];
    for await (const w of stack.server.env.client.workflow.list({
      query: `WorkflowId = '${subagentWorkflowId(conv, callId)}'`,
    }))
      runs.push(w);
    assert.equal(runs.length, 1);
    const row = await loadBackgroundTask(stack.db.pool, conv, taskId);
    assert.equal(row?.status, 'completed');
    assert.ok(row?.deliveredAt);
    // The task started once, from turn 1.
    const history = await stack.server.env.client.workflow.getHandle(turnWorkflowId(conv, 1)).fetchHistory();
    const starts = (history.events ?? []).filter(
      (e) =>
        e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === backgroundTaskWorkflowId(conv, callId),
    );
    assert.equal(starts.length, 1);
  } finally {
    if (locked) await lock.query('ROLLBACK').catch(() => undefined);
    lock.release();
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
