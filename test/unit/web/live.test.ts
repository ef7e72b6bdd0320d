import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, emptyTurn, liveEvent, withQueueRow, type LiveEvent } from '../../../apps/web/live';
import { toSseMessage } from '../../../apps/gateway/protocol';
import { parseStreamEvent } from '../../../core/stream/events';

const TS = '2026-01-01T00:00:00.000Z';
/** An SSE message as the gateway sends it, read back as the web chat reads it (the shared parser). */
const sse = (seq: number, raw: Record<string, unknown>): LiveEvent => {
  const e = parseStreamEvent({ conversationId: 'c', seq, ts: TS, turnId: 'turn_1', attempt: 1, ...raw });
  return liveEvent(toSseMessage(e), 'c')!;
};
const delta = (seq: number, text: string) => sse(seq, { kind: 'delta', channel: 'answer', payload: { text } });

test('the live turn drops replayed events by offset, and takes reissued offsets again after a rewind', () => {
  let t = emptyTurn();
  for (const [seq, text] of [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
    [2, 'b'], // a replay after a reconnect: ignored
  ] as const)
    t = apply(t, delta(seq, text));
  assert.equal(t.answer, 'abc');
  // The stream lost offset 3 (Postgres crash): it rewinds to 2 and gives offset 3 out again.
  t = apply(t, liveEvent({ event: 'rewind', id: '2', data: JSON.stringify({ from: 3, to: 2 }) }, 'c')!);
  t = apply(t, delta(3, 'C'));
  assert.equal(t.answer, 'abcC', 'the reissued offset is new to the reader');
  assert.deepEqual([...t.seen].sort(), [1, 2, 3]);
  assert.equal(liveEvent({ event: 'gap', data: JSON.stringify({ from: 1, to: 4 }) }, 'c'), undefined);
});

test('a plan step event sets the live plan', () => {
  const plan = { planId: 'p', steps: [{ n: 1, text: 'x', status: 'done' }], state: 'complete' };
  const t = apply(emptyTurn(), sse(1, { kind: 'step', payload: { phase: 'plan', plan } }));
  assert.deepEqual(t.plan, plan);
});

test('tool cards, canvases (a rewrite starts over), composite attributes in place, usage and cost, done', () => {
  const events = [
    sse(1, { kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' } }),
    sse(2, {
      kind: 'step',
      payload: { phase: 'iteration.start', round: 0, callId: 'k1', tool: 'react.write', params: { path: 'a.md' } },
    }),
    sse(3, {
      kind: 'delta',
      channel: 'canvas',
      payload: { text: '# one', path: 'fi:turn_1.files/a.md', mime: 'text/markdown', index: 0 },
    }),
    sse(4, {
      kind: 'delta',
      channel: 'canvas',
      payload: { text: '', path: 'fi:turn_1.files/a.md', index: 1, completed: true },
    }),
    sse(5, { kind: 'delta', channel: 'canvas', payload: { text: '# two', path: 'fi:turn_1.files/a.md', index: 0 } }),
    sse(6, {
      kind: 'step',
      payload: { phase: 'iteration.done', callId: 'k1', tool: 'react.write', ok: true, observation: '{}' },
    }),
    sse(7, { kind: 'attribute', channel: 'canvas', instance: 0, payload: { key: 'title', value: 'T' } }),
    sse(8, { kind: 'attribute', channel: 'canvas', instance: 0, payload: { key: 'n', value: 1 } }),
    sse(9, { kind: 'attribute', channel: 'canvas', instance: 0, payload: { key: 'title', value: 'T2' } }),
    sse(10, {
      kind: 'usage',
      payload: {
        round: 0,
        usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
        costUsd: 0.25,
      },
    }),
    sse(11, {
      kind: 'done',
      payload: {
        turnId: 'turn_1',
        answer: 'ok',
        iterations: 1,
        usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
        completionPath: 'complete',
      },
    }),
  ];
  const t = events.reduce(apply, emptyTurn());
  assert.equal(t.turnId, 'turn_1');
  assert.equal(t.tools.length, 1);
  assert.equal(t.tools[0]!.ok, true);
  assert.deepEqual(t.tools[0]!.args, { path: 'a.md' });
  assert.deepEqual(
    t.canvases.map((c) => [c.key, c.kind, c.text, c.done]),
    [
      ['fi:turn_1.files/a.md', 'markdown', '# two', true],
      ['composite:turn_1:0', 'json', '', true],
    ],
  );
  assert.deepEqual(t.canvases[1]!.attributes, [
    ['title', 'T2'],
    ['n', 1],
  ]);
  assert.equal(t.costUsd, 0.25);
  assert.equal(t.answer, 'ok');
  assert.equal(t.completionPath, 'complete');
});

test('an event kind this page does not know (a newer gateway) is skipped, not thrown', () => {
  const novel = liveEvent({ event: 'novel', id: '1', data: JSON.stringify({ seq: 1, ts: TS, x: 1 }) }, 'c')!;
  const t = apply(emptyTurn(), novel);
  assert.equal(t.answer, '');
  assert.deepEqual([...t.seen], [1]);
});

test('a queued turn: its place from turn.start, then from the state rows; its first event after that means it runs', () => {
  const start = sse(1, {
    kind: 'phase',
    payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w', queuePosition: 3 },
  });
  let t = apply(emptyTurn(), start);
  assert.equal(t.queuePosition, 3);
  // The gateway's state: another turn's row and a row without a position change nothing.
  assert.equal(withQueueRow(t, { turnId: 'turn_2', status: 'queued', queuePosition: 1 }), t);
  assert.equal(withQueueRow(t, undefined), t);
  t = withQueueRow(t, { turnId: 'turn_1', status: 'queued', queuePosition: 2 });
  assert.equal(t.queuePosition, 2);
  assert.equal(withQueueRow(t, { turnId: 'turn_1', status: 'queued', queuePosition: 2 }), t, 'same place: same state');
  // The row runs: no place any more.
  assert.equal(withQueueRow(t, { turnId: 'turn_1', status: 'running' }).queuePosition, undefined);
  // Or the stream says first: any later event.
  t = apply(t, sse(2, { kind: 'step', payload: { phase: 'thinking.start', round: 1 } }));
  assert.equal(t.queuePosition, undefined);
  // A turn that was never queued is left alone by a queued row (a stale read).
  const running = apply(
    emptyTurn(),
    sse(1, { kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' } }),
  );
  assert.equal(withQueueRow(running, { turnId: 'turn_1', status: 'queued', queuePosition: 1 }), running);
});
