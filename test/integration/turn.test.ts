import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks, getArtifact } from '../../store/timeline-store';
import { recordHistory } from '../support/fixtures';
import { conversationWorkflowId } from '../../core/turn/ids';
import { conversationStateQuery, startTurnUpdate } from '../../contract/definitions';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('turn');
  await stack.startWorker();
});
after(async () => stack.teardown());

test('a turn with two tool rounds completes and persists its timeline in order, each block once', async () => {
  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(conv, 'Make a plan note and check it', {
    model: { provider: 'scripted', script: 'demo' },
  });
  assert.equal(started.turnIndex, 1);
  assert.equal(started.workflowId, `conv/${conv}/turn/1`);
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'complete');
  assert.equal(result.rounds, 3);
  assert.match(result.answer, /wrote a plan note/);
  assert.ok(result.usage.inputTokens > 0);

  const blocks = await loadBlocks(stack.db.pool, conv);
  // The title call runs beside round 1: its hidden block lands wherever that call ends.
  assert.equal(blocks.filter((b) => b.type === 'stage.gate').length, 1);
  const types = blocks.filter((b) => b.type !== 'stage.gate').map((b) => b.type);
  assert.deepEqual(types, [
    'turn.header',
    'user.prompt',
    'react.notes',
    'react.round.start',
    'react.tool.call',
    'react.tool.result',
    'react.notes',
    'react.round.start',
    'react.tool.call',
    'react.tool.result',
    'react.notes',
    'assistant.completion',
    'stage.suggested_followups',
  ]);
  assert.equal(new Set(blocks.map((b) => b.id)).size, blocks.length, 'no duplicate block ids');
  const read = blocks.filter((b) => b.type === 'react.tool.result')[1]!;
  assert.match(read.text ?? '', /# Plan/);

  const file = await getArtifact(stack.db.pool, conv, 'file', 'turn_1/files/notes.md');
  assert.match(file?.content ?? '', /Read it back/);
  const timeline = await getArtifact(stack.db.pool, conv, 'conv.timeline.v1', 'latest');
  const payload = timeline?.payload as { version: number; blocks: unknown[]; turn_ids: string[] };
  assert.equal(payload.version, 1);
  assert.equal(payload.blocks.length, blocks.length);
  assert.deepEqual(payload.turn_ids, ['turn_1']);
  assert.equal(
    (payload as unknown as { conversation_title: string }).conversation_title,
    'Plan note check',
    'the gate titled the new conversation',
  );
  // The title call runs inside round 1's activity: no gate activity (nor the workflow task its
  // completion would wake); round 1's input carries the title's prompt, later rounds' do not.
  const turnEvents = (await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory()).events ?? [];
  const scheduled = (name: string) =>
    turnEvents.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
  assert.equal(scheduled('gate').length, 0, 'no gate activity');
  const titles = scheduled('decide').map((e) => {
    const payload = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
    return (defaultPayloadConverter.fromPayload(payload!) as { title?: { prompt: string } }).title?.prompt;
  });
  assert.deepEqual(titles, ['Make a plan note and check it', undefined, undefined]);
  // A worker killed inside a workflow task (or a local activity) holds a turn and its children for
  // their workflow task timeout: 2 s, not the default 10 s.
  for (const id of [started.workflowId, `${started.workflowId}/persist`]) {
    const history = await stack.server.env.client.workflow.getHandle(id).fetchHistory();
    const startedEvent = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    assert.equal(Number(startedEvent?.workflowTaskTimeout?.seconds ?? 0), 2, `${id}: workflow task timeout`);
  }
  await recordHistory(stack.server.address, started.workflowId, 'turn-two-tool-rounds-v9-title-in-round');
  await recordHistory(stack.server.address, `${started.workflowId}/persist`, 'persist-turn-v6-roles');
});

test('the conversation validates a startTurn update itself: a client that skips the checks gets a clear rejection', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Make a plan note and check it', {
    model: { provider: 'scripted', script: 'demo' },
  });
  const handle = stack.server.env.client.workflow.getHandle(conversationWorkflowId(conv));
  const bad = {
    conversationId: conv,
    prompt: '   ',
    messageId: 'msg_bad',
    options: { model: { provider: 'scripted' } },
  };
  await assert.rejects(
    handle.executeUpdate(startTurnUpdate, { args: [bad as never], updateId: 'msg_bad' }),
    (err: Error) => {
      assert.match(`${err.message} ${String((err as { cause?: Error }).cause?.message)}`, /prompt is empty/);
      return true;
    },
  );
  // The conversation goes on: the valid turn completes and nothing was queued for the rejected one.
  assert.equal((await stack.client.result(conv, 1)).completionPath, 'complete');
  assert.equal((await handle.query(conversationStateQuery)).nextTurnIndex, 2);
});
