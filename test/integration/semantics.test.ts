import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { complete, createTestStack, decision, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { resolvePath } from '../../core/timeline/path-resolve';
import { followupSignal, steerSignal } from '../../contract/definitions';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('semantics');
  // Tools as regular activities here (their history shape is asserted below); the local-activity
  // path, concurrency included, is test/integration/local-tools.test.ts.
  await stack.startWorker({ multiAction: 'safe_fanout', localTools: false });
});
after(async () => stack.teardown());

const act = (toolId: string, params: Record<string, unknown>) =>
  decision({ action: 'call_tool', notes: `use ${toolId}`, tool_call: { tool_id: toolId, params } });
const writeA = act('react.write', { path: 'a.md', channel: 'internal', content: 'A', kind: 'file' });
const readA = act('react.read', { paths: ['fi:turn_1.files/a.md'] });

test('multi-action (safe_fanout): exploitation then exploration runs both, one after another, each with its own call id', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write then read in one round', {
    model: { provider: 'scripted', script: { rounds: [thinking('both') + writeA + readA, complete('ok')] } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.rounds, 2);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const calls = blocks.filter((b) => b.type === 'react.tool.call');
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.deepEqual(
    calls.map((c) => JSON.parse(c.text!).tool_id),
    ['react.write', 'react.read'],
  );
  assert.equal(new Set(calls.map((c) => c.call_id)).size, 2);
  assert.deepEqual(
    results.map((b) => b.call_id),
    calls.map((c) => c.call_id),
    'results in call order',
  );
  assert.match(results[1]!.text!, /"missing":\[\]/, 'the read ran after the write');
});

test('multi-action (safe_fanout): two explorations run as concurrent activities; their results land in call order', async () => {
  const conv = uniqueId('conv');
  const writeB = act('react.write', { path: 'b.md', channel: 'internal', content: 'B', kind: 'file' });
  const readB = act('react.read', { paths: ['fi:turn_1.files/b.md'] });
  await stack.client.startTurn(conv, 'write two files, then read both at once', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          thinking('a') + writeA,
          thinking('b') + writeB,
          thinking('both reads') + readA + readB,
          complete('ok'),
        ],
      },
    },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.rounds, 4);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const calls = blocks.filter((b) => b.type === 'react.tool.call');
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.deepEqual(
    results.map((b) => b.call_id),
    calls.map((c) => c.call_id),
    'results in call order',
  );
  assert.match(results[2]!.text!, /"missing":\[\]/);
  assert.match(results[3]!.text!, /"missing":\[\]/);

  // In Temporal: both reads were scheduled by one workflow task (concurrently), then one
  // appendToolResults closed the batch.
  const events = (await stack.server.env.client.workflow.getHandle(`conv/${conv}/turn/1`).fetchHistory()).events ?? [];
  const toolSchedules = events
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'runTool');
  assert.equal(toolSchedules.length, 4);
  const [, , read1, read2] = toolSchedules;
  assert.equal(String(read1!.workflowTaskCompletedEventId), String(read2!.workflowTaskCompletedEventId));
  const appends = events.filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'appendToolResults',
  );
  assert.equal(appends.length, 1);
  const [write1, write2] = toolSchedules;
  assert.notEqual(
    String(write1!.workflowTaskCompletedEventId),
    String(write2!.workflowTaskCompletedEventId),
    'writes run one after another',
  );
});

test('multi-action (safe_fanout): exploration then exploitation is rejected with a notice; the first action still runs', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'read then write', {
    model: { provider: 'scripted', script: { rounds: [thinking('both') + readA + writeA, complete('ok')] } },
  });
  await stack.client.result(conv, 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.deepEqual(
    blocks.filter((b) => b.type === 'react.tool.call').map((c) => JSON.parse(c.text!).tool_id),
    ['react.read'],
  );
  const notices = blocks.filter((b) => b.type === 'react.notice').map((b) => JSON.parse(b.text!).code as string);
  assert.ok(notices.includes('protocol_violation.multi_action_bundle_strategy_incompatible'), notices.join(', '));
});

test('a completion made before a newly arrived followup is kept, the turn continues, and completions are numbered', async () => {
  const conv = uniqueId('conv');
  const slowFirst =
    thinking('x'.repeat(120)) + decision({ action: 'complete', notes: '', final_answer: 'first answer' });
  await stack.client.startTurn(conv, 'answer twice', {
    model: {
      provider: 'scripted',
      script: { rounds: [slowFirst, complete('second answer: {{event}}')], chunkSize: 8, latencyMs: 40 },
    },
  });
  await waitFor('round 1 streaming', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  await stack.client.followup(conv, 'and one more');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'second answer: and one more');
  assert.equal(r.rounds, 2);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const completions = blocks.filter((b) => b.type === 'assistant.completion');
  assert.deepEqual(
    completions.map((b) => [b.text, b.meta.ordinal]),
    [
      ['first answer', 1],
      ['second answer: and one more', 2],
    ],
  );
  const latest = resolvePath(blocks, 'ar:turn_1.assistant.completion');
  const first = resolvePath(blocks, 'ar:turn_1.assistant.completion.1');
  assert.equal(latest.source === 'timeline' && latest.blocks.map((b) => b.text).join(), 'second answer: and one more');
  assert.equal(first.source === 'timeline' && first.blocks.map((b) => b.text).join(), 'first answer');
});

test('events addressed to another turn are ignored; a repeated message id is folded once', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'long', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [thinking('y'.repeat(200)) + decision({ action: 'complete', notes: '', final_answer: 'done' })],
        chunkSize: 8,
        latencyMs: 30,
      },
    },
  });
  await waitFor('round 1 streaming', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  const view = await stack.client.conversationState(conv);
  const handle = stack.server.env.client.workflow.getHandle(view.activeTurn!.workflowId);
  await handle.signal(followupSignal, {
    kind: 'followup',
    messageId: 'msg_other',
    text: 'for turn 9',
    targetTurnId: 'turn_9',
  });
  await handle.signal(followupSignal, { kind: 'followup', messageId: 'msg_dup', text: 'once' });
  await handle.signal(followupSignal, { kind: 'followup', messageId: 'msg_dup', text: 'once' });
  await stack.client.result(conv, 1);
  const followups = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'user.followup');
  assert.deepEqual(
    followups.map((b) => b.text),
    ['once'],
  );
});

test("a followup queued with a steer overrides the steer's finalize: the turn continues normally", async () => {
  const conv = uniqueId('conv');
  const slow = thinking('z'.repeat(300)) + decision({ action: 'complete', notes: '', final_answer: 'never' });
  await stack.client.startTurn(conv, 'long', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [slow, complete('continued with: {{event}}')],
        chunkSize: 4,
        latencyMs: 30,
        finalize: complete('finalized'),
      },
    },
  });
  await waitFor('round 1 streaming', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  const view = await stack.client.conversationState(conv);
  const handle = stack.server.env.client.workflow.getHandle(view.activeTurn!.workflowId);
  // Both arrive before the cancelled round returns: the followup wins over the finalize.
  await handle.signal(followupSignal, { kind: 'followup', messageId: 'msg_f', text: 'the followup' });
  await handle.signal(steerSignal, { kind: 'steer', messageId: 'msg_s', text: 'stop' });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'complete', 'not steer_finalize');
  assert.equal(
    r.answer,
    'continued with: stop',
    'a normal round (not the finalize script) that saw both events; {{event}} is the latest',
  );
  const types = (await loadBlocks(stack.db.pool, conv)).map((b) => b.type);
  assert.ok(types.includes('user.followup') && types.includes('user.steer'));
});
