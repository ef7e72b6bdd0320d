import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseStreamEvent,
  STREAM_EVENT_KINDS,
  type StreamEvent,
  type StreamEventBody,
} from '../../../core/stream/events';
import {
  a2aItemSeq,
  A2A_USAGE_KEY,
  ANSWER_ARTIFACT_ID,
  TASK_STATE,
  toA2aItems,
  type A2aItem,
} from '../../../core/a2a/stream-to-a2a';
import { TaskFold } from '../../../core/a2a/task';
import { remoteUsageOf } from '../../../activities/agents/a2a-delegate';

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 5, cacheWriteTokens: 0 };
const ids = { taskId: 'turn_1', contextId: 'conv_1' };
let seq = 0;
const ev = (body: StreamEventBody): StreamEvent =>
  parseStreamEvent({ ...body, conversationId: 'conv_1', seq: ++seq, ts: '2026-01-01T00:00:00.000Z', turnId: 'turn_1' });

const W = TASK_STATE.working;
/** One event of every kind, with the A2A state (or artifact) it must become. */
const CASES: Array<
  [
    StreamEventBody,
    { state: number; final: boolean; message?: string } | { artifact: string; append: boolean; last: boolean },
  ]
> = [
  [
    { kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' } },
    { state: W, final: false },
  ],
  [
    { kind: 'phase', payload: { phase: 'turn.failed', turnId: 'turn_1', turnIndex: 1, error: 'boom' } },
    { state: TASK_STATE.failed, final: true, message: 'boom' },
  ],
  [
    { kind: 'step', payload: { phase: 'iteration.start', round: 1 } },
    { state: W, final: false },
  ],
  [
    { kind: 'answer', payload: { phase: 'start' } },
    { artifact: '', append: false, last: false },
  ],
  [
    { kind: 'delta', channel: 'answer', payload: { text: 'Hel', round: 1 } },
    { artifact: 'Hel', append: true, last: false },
  ],
  [
    { kind: 'delta', channel: 'thinking', payload: { text: 'hmm' } },
    { state: W, final: false },
  ],
  [
    { kind: 'answer', payload: { phase: 'discarded' } },
    { state: W, final: false },
  ],
  [
    { kind: 'answer', payload: { phase: 'done', text: 'Hello' } },
    { artifact: 'Hello', append: false, last: true },
  ],
  [
    { kind: 'attribute', channel: 'canvas', payload: { key: 'title', value: 'x' } },
    { state: W, final: false },
  ],
  [
    { kind: 'usage', payload: { round: 1, usage } },
    { state: W, final: false },
  ],
  [
    { kind: 'inject', payload: { type: 'steer', messageId: 'm', text: 'go' } },
    { state: W, final: false },
  ],
  [
    { kind: 'retry', payload: { round: 1, attempt: 2 } },
    { state: W, final: false },
  ],
  [
    { kind: 'model_error', payload: { error: 'network', nextAttempt: 2 } },
    { state: W, final: false },
  ],
  [
    { kind: 'compact', payload: { phase: 'start' } },
    { state: W, final: false },
  ],
  [
    { kind: 'exec', payload: { phase: 'output', execId: 'e', backend: 'local', text: 'x' } },
    { state: W, final: false },
  ],
  [
    { kind: 'approval', payload: { phase: 'requested', callId: 'c', tool: 'web_fetch' } },
    {
      state: TASK_STATE.inputRequired,
      final: false,
      message: 'approval required for web_fetch (call c): reply "approve" or "deny: <reason>" in this task',
    },
  ],
  [
    { kind: 'approval', payload: { phase: 'decided', callId: 'c', tool: 'web_fetch' } },
    { state: W, final: false },
  ],
  [
    { kind: 'budget', payload: { phase: 'warning', budget: 'b', capUsd: 1, usedUsd: 0.8 } },
    { state: W, final: false },
  ],
  [
    { kind: 'budget', payload: { phase: 'exceeded', budget: 'b', capUsd: 1, usedUsd: 1 } },
    { state: TASK_STATE.failed, final: true, message: 'budget b exceeded' },
  ],
  [
    { kind: 'done', payload: { turnId: 'turn_1', answer: 'Hello', iterations: 1, usage, completionPath: 'complete' } },
    { state: TASK_STATE.completed, final: true, message: 'Hello' },
  ],
];

const textOf = (parts: Array<{ content?: unknown }>): string =>
  parts.map((p) => (p.content as { $case: string; value: string }).value).join('');

test('every stream kind maps, each to exactly one A2A item of the expected state or artifact chunk', () => {
  assert.deepEqual([...new Set(CASES.map(([b]) => b.kind))].sort(), [...STREAM_EVENT_KINDS].sort());
  for (const [body, want] of CASES) {
    const e = ev(body);
    const items = toA2aItems(e, ids);
    assert.equal(items.length, 1, JSON.stringify(body));
    const item = items[0] as A2aItem;
    assert.equal(a2aItemSeq(item), e.seq);
    assert.equal(item.event.taskId, 'turn_1');
    assert.equal(item.event.contextId, 'conv_1');
    if ('artifact' in want) {
      assert.equal(item.type, 'artifact', JSON.stringify(body));
      if (item.type !== 'artifact') continue;
      assert.equal(item.event.artifact?.artifactId, ANSWER_ARTIFACT_ID);
      assert.equal(textOf(item.event.artifact?.parts ?? []), want.artifact);
      assert.equal(item.event.append, want.append);
      assert.equal(item.event.lastChunk, want.last);
    } else {
      assert.equal(item.type, 'status', JSON.stringify(body));
      if (item.type !== 'status') continue;
      assert.equal(item.event.status?.state, want.state, JSON.stringify(body));
      assert.equal(item.final, want.final, JSON.stringify(body));
      const msg = item.event.status?.message;
      assert.equal(msg === undefined ? undefined : textOf(msg.parts), want.message, JSON.stringify(body));
    }
  }
});

test('mapping is pure: the same event yields the same items (a replayed log equals the live stream)', () => {
  const e = ev({ kind: 'delta', channel: 'answer', payload: { text: 'x' } });
  assert.deepEqual(toA2aItems(e, ids), toA2aItems(structuredClone(e), ids));
});

test('streamed answer chunks concatenate to the done text', () => {
  const events = [
    ev({ kind: 'answer', payload: { phase: 'start' } }),
    ev({ kind: 'delta', channel: 'answer', payload: { text: 'Hel' } }),
    ev({ kind: 'delta', channel: 'answer', payload: { text: 'lo' } }),
  ];
  let acc = '';
  for (const item of events.flatMap((e) => toA2aItems(e, ids))) {
    if (item.type !== 'artifact') continue;
    const t = textOf(item.event.artifact?.parts ?? []);
    acc = item.event.append ? acc + t : t;
  }
  assert.equal(acc, 'Hello');
});

test("the restated TaskState numbers are the SDK's", async () => {
  const { TaskState } = await import('@a2a-js/sdk');
  assert.deepEqual(TASK_STATE, {
    submitted: TaskState.TASK_STATE_SUBMITTED,
    working: TaskState.TASK_STATE_WORKING,
    completed: TaskState.TASK_STATE_COMPLETED,
    failed: TaskState.TASK_STATE_FAILED,
    canceled: TaskState.TASK_STATE_CANCELED,
    inputRequired: TaskState.TASK_STATE_INPUT_REQUIRED,
  });
});

test('a cancelled turn is a canceled task; the turn start shows no workflow id', () => {
  const done = ev({
    kind: 'done',
    payload: { turnId: 'turn_1', answer: 'stopped', iterations: 1, usage, completionPath: 'cancelled' },
  });
  const [item] = toA2aItems(done, ids);
  assert.equal(item?.type === 'status' && item.event.status?.state, TASK_STATE.canceled);
  assert.equal(item?.type === 'status' && item.final, true);
  const start = ev({
    kind: 'phase',
    payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'conv/x/turn/1' },
  });
  assert.doesNotMatch(JSON.stringify(toA2aItems(start, ids)), /conv\/x\/turn/);
});

test("the final status message carries the turn's usage under dreact/usage; the task and a delegate read it", () => {
  const done = ev({
    kind: 'done',
    payload: { turnId: 'turn_1', answer: 'Hello', iterations: 1, usage, completionPath: 'complete' },
  });
  const [item] = toA2aItems(done, ids);
  const message = item?.type === 'status' ? item.event.status?.message : undefined;
  assert.deepEqual(message?.metadata, { [A2A_USAGE_KEY]: usage });
  const fold = new TaskFold(ids, 0);
  fold.push(item!);
  assert.deepEqual(remoteUsageOf(fold.task()), usage);
  // A status without it (another server, an interrupted task) reports none.
  const [working] = toA2aItems(ev({ kind: 'step', payload: { phase: 'iteration.start', round: 1 } }), ids);
  fold.push(working!);
  assert.equal(remoteUsageOf(fold.task()), undefined);
});
