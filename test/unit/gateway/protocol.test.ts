import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamEvent } from '../../../store/stream-bus';
import { fromSseMessage, parseOffset, protocolEvent, toSseMessage } from '../../../apps/gateway/protocol';

const ev = (kind: string, payload: Record<string, unknown>, extra: Partial<StreamEvent> = {}): StreamEvent =>
  ({
    conversationId: 'c',
    seq: 7,
    ts: '2026-01-01T00:00:00.000Z',
    turnId: 'turn_1',
    attempt: 1,
    kind,
    payload,
    ...extra,
  }) as StreamEvent;

test('steps map to thinking/iteration types; tool params travel as arguments', () => {
  assert.deepEqual(protocolEvent(ev('step', { phase: 'thinking.start', round: 1, mode: 'normal' })), {
    event: 'step',
    fields: { type: 'thinking', phase: 'start', round: 1, mode: 'normal' },
  });
  assert.deepEqual(
    protocolEvent(
      ev('step', {
        phase: 'iteration.start',
        round: 2,
        tool: 'web.fetch',
        callId: 'k',
        summary: 's',
        params: { url: 'u' },
      }),
    ),
    {
      event: 'step',
      fields: {
        type: 'iteration',
        phase: 'start',
        round: 2,
        tool: 'web.fetch',
        callId: 'k',
        summary: 's',
        arguments: { url: 'u' },
      },
    },
  );
  assert.deepEqual(
    protocolEvent(ev('step', { phase: 'iteration.done', tool: 'web.fetch', callId: 'k', ok: true, observation: 'o' }))
      .fields,
    { type: 'iteration', phase: 'done', tool: 'web.fetch', callId: 'k', ok: true, observation: 'o' },
  );
  assert.deepEqual(protocolEvent(ev('step', { phase: 'interrupted', round: 3 })).fields, {
    type: 'interrupted',
    round: 3,
  });
});

test('answer deltas are answer events; other channels, attributes, usage and tool channel output are channel events', () => {
  assert.deepEqual(protocolEvent(ev('delta', { text: 'hi', round: 1 }, { channel: 'answer', instance: 0 })), {
    event: 'answer',
    fields: { phase: 'delta', text: 'hi', round: 1, instance: 0 },
  });
  assert.deepEqual(protocolEvent(ev('answer', { phase: 'done', text: 'all' })), {
    event: 'answer',
    fields: { phase: 'done', text: 'all' },
  });
  assert.deepEqual(protocolEvent(ev('delta', { text: 't' }, { channel: 'thinking' })), {
    event: 'channel',
    fields: { channel: 'thinking', text: 't' },
  });
  assert.deepEqual(protocolEvent(ev('delta', { text: 'r' }, { channel: 'raw' })).fields.channel, 'raw');
  assert.deepEqual(
    protocolEvent(ev('attribute', { key: 'title', value: 'X', round: 1 }, { channel: 'canvas', instance: 2 })),
    {
      event: 'channel',
      fields: { channel: 'canvas', attribute: { key: 'title', value: 'X' }, round: 1, instance: 2 },
    },
  );
  assert.deepEqual(
    protocolEvent(
      ev('usage', { round: 1, usage: { inputTokens: 1, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
    ),
    {
      event: 'channel',
      fields: {
        channel: 'usage',
        round: 1,
        usage: { inputTokens: 1, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    },
  );
  // A tool's live output (react.write canvas) is a delta on its channel.
  assert.deepEqual(protocolEvent(ev('delta', { path: 'a.md', text: 'x', callId: 'k' }, { channel: 'canvas' })).fields, {
    channel: 'canvas',
    path: 'a.md',
    text: 'x',
    callId: 'k',
  });
});

test('done carries elapsed time; inject, retry, compact and exec keep their names; an unknown kind is a clear error', () => {
  assert.deepEqual(
    protocolEvent(ev('done', { turnId: 'turn_1', answer: 'a', iterations: 2, usage: {}, completionPath: 'complete' }), {
      elapsedMs: 1234,
    }),
    {
      event: 'done',
      fields: { answer: 'a', iterations: 2, usage: {}, completionPath: 'complete', elapsedMs: 1234 },
    },
  );
  for (const kind of ['inject', 'retry', 'compact', 'exec'])
    assert.equal(protocolEvent(ev(kind, { x: 1 })).event, kind);
  assert.throws(() => protocolEvent(ev('future.kind', { x: 1 })), /unhandled stream event kind/);
  assert.throws(
    () => fromSseMessage({ event: 'future.kind', id: '3', data: '{"ts":"2026-01-01T00:00:00.000Z"}' }, 'c'),
    /invalid stream event future\.kind #3 of c/,
  );
  const msg = toSseMessage(ev('retry', { round: 1, attempt: 2, seq: 99 }, { attempt: 2 }));
  assert.equal(msg.event, 'retry');
  assert.equal(msg.id, '7');
  assert.deepEqual(JSON.parse(msg.data), {
    seq: 7,
    ts: '2026-01-01T00:00:00.000Z',
    turnId: 'turn_1',
    attempt: 2,
    round: 1,
  });
});

test('offsets are non-negative integers', () => {
  assert.equal(parseOffset(undefined, 'after'), 0);
  assert.equal(parseOffset(' 42 ', 'after'), 42);
  for (const bad of ['-1', '1.5', 'abc', '1e400'])
    assert.match((parseOffset(bad, 'after') as { error: string }).error, /non-negative integer/);
});

test('fromSseMessage inverts toSseMessage for every stream kind', () => {
  const samples: StreamEvent[] = [
    ev('phase', { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' }),
    ev('step', { phase: 'thinking.start', round: 1, mode: 'normal' }),
    ev('step', { phase: 'iteration.start', round: 2, tool: 't', callId: 'k', summary: 's', params: { a: 1 } }),
    ev('step', { phase: 'iteration.done', tool: 't', callId: 'k', ok: false, observation: 'o' }),
    ev('step', { phase: 'invalid', round: 1, code: 'x' }),
    ev('delta', { text: 'a', round: 1 }, { channel: 'answer', instance: 0 }),
    ev('delta', { text: 't', round: 1 }, { channel: 'thinking', instance: 1 }),
    ev('attribute', { key: 'k', value: [1], round: 1 }, { channel: 'canvas', instance: 0 }),
    ev('usage', { round: 1, usage: { inputTokens: 1, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
    ev('delta', { path: 'p', text: 'x', callId: 'k' }, { channel: 'canvas' }),
    ev('exec', { phase: 'output', execId: 'e1', backend: 'local', text: 'line' }),
    ev('answer', { phase: 'done', text: 'x' }),
    ev('inject', { type: 'steer', messageId: 'm', text: 'x' }),
    ev('retry', { round: 1, attempt: 2 }, { attempt: 2 }),
    ev('compact', { phase: 'start' }),
    ev('done', {
      turnId: 'turn_1',
      answer: 'a',
      iterations: 1,
      usage: { inputTokens: 1, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
      completionPath: 'complete',
    }),
  ];
  for (const e of samples) assert.deepEqual(fromSseMessage(toSseMessage(e), 'c'), e, e.kind);
  assert.equal(fromSseMessage({ event: 'gap', data: '{"from":1,"to":2}' }, 'c'), undefined);
  assert.equal(fromSseMessage({ event: 'rewind', id: '3', data: '{"from":5,"to":3}' }, 'c'), undefined);
});
