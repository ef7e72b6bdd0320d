import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStreamEvent, type StreamEvent, type StreamEventBody } from '../../../core/stream/events';
import { TASK_STATE, toA2aItems } from '../../../core/a2a/stream-to-a2a';
import { a2aTaskId, parseA2aTaskId, promptOfMessage, TaskFold } from '../../../core/a2a/task';

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
const ids = { taskId: 'conv_1/1', contextId: 'conv_1' };
let seq = 10;
const ev = (body: StreamEventBody): StreamEvent =>
  parseStreamEvent({ ...body, conversationId: 'conv_1', seq: ++seq, ts: '2026-01-01T00:00:00.000Z', turnId: 'turn_1' });

test('task ids: <context>/<turn>, parsed back; anything else names the expected shape', () => {
  assert.equal(a2aTaskId('conv.a:b~c', 3), 'conv.a:b~c/3');
  assert.deepEqual(parseA2aTaskId('conv.a:b~c/3'), { contextId: 'conv.a:b~c', turnIndex: 3 });
  for (const bad of ['conv', 'conv/', '/3', 'conv/0', 'conv/1.5', 'conv/-1'])
    assert.match((parseA2aTaskId(bad) as { error: string }).error, /tasks are <contextId>\/<turn number>/, bad);
});

test('the prompt of a message: its text parts; another part is refused by index', () => {
  const part = (content: unknown) => ({ content, metadata: undefined, filename: '', mediaType: '' });
  const msg = (parts: unknown[]) =>
    ({
      messageId: 'm',
      contextId: '',
      taskId: '',
      role: 1,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }) as never;
  assert.deepEqual(promptOfMessage(msg([part({ $case: 'text', value: 'a' }), part({ $case: 'text', value: 'b' })])), {
    text: 'a\nb',
  });
  assert.match((promptOfMessage(msg([part({ $case: 'data', value: {} })])) as { error: string }).error, /parts\[0\]/);
  assert.match((promptOfMessage(msg([])) as { error: string }).error, /no text/);
  assert.match((promptOfMessage(undefined) as { error: string }).error, /message: required/);
});

test('TaskFold: a snapshot at any offset plus the later items is the fold of all of them', () => {
  const events = [
    ev({ kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' } }),
    ev({ kind: 'answer', payload: { phase: 'start' } }),
    ev({ kind: 'delta', channel: 'answer', payload: { text: 'Hel' } }),
    ev({ kind: 'delta', channel: 'answer', payload: { text: 'lo' } }),
    ev({ kind: 'answer', payload: { phase: 'done', text: 'Hello' } }),
    ev({
      kind: 'done',
      payload: { turnId: 'turn_1', answer: 'Hello', iterations: 1, usage, completionPath: 'complete' },
    }),
  ];
  const items = events.flatMap((e) => toA2aItems(e, ids));
  const whole = new TaskFold(ids, 10);
  assert.equal(whole.task().status?.state, TASK_STATE.submitted);
  for (const i of items) whole.push(i);
  assert.equal(whole.final, true);
  const task = whole.task();
  assert.equal(task.status?.state, TASK_STATE.completed);
  assert.equal(task.artifacts.length, 1);
  assert.deepEqual(task.metadata, { dreact: { seq: events.at(-1)!.seq } });
  for (let cut = 0; cut <= items.length; cut++) {
    const fold = new TaskFold(ids, 10);
    for (const i of items.slice(0, cut)) fold.push(i);
    for (const i of items.slice(cut)) fold.push(i);
    assert.deepEqual(fold.task(), task, `cut at ${cut}`);
  }
  // Mid-answer, the artifact holds the chunks so far.
  const mid = new TaskFold(ids, 10);
  for (const i of items.slice(0, 4)) mid.push(i);
  const [answer] = mid.task().artifacts;
  assert.equal(answer?.parts[0]?.content?.$case === 'text' && answer.parts[0].content.value, 'Hello');
  assert.equal(mid.final, false);
});
