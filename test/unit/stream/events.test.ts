import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseStreamEvent,
  STREAM_EVENT_KINDS,
  StreamEventBodySchema,
  type StreamEventBody,
} from '../../../core/stream/events';
import { createLiveRenderer } from '../../../apps/cli/render';
import { fromSseMessage, protocolEvent, toSseMessage } from '../../../apps/gateway/protocol';

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 5, cacheWriteTokens: 0 };
/** One valid event of every kind the runtime publishes. */
const SAMPLES: StreamEventBody[] = [
  { kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'conv/c/turn/1' } },
  { kind: 'phase', payload: { phase: 'turn.failed', turnId: 'turn_1', turnIndex: 1, error: 'boom' } },
  { kind: 'step', payload: { phase: 'thinking.start', round: 1 } },
  { kind: 'delta', channel: 'code', instance: 0, payload: { text: 'print(1)', round: 1 } },
  { kind: 'attribute', channel: 'canvas', instance: 0, payload: { key: 'title', value: 'Plan' } },
  { kind: 'answer', payload: { phase: 'done', text: 'all' } },
  { kind: 'usage', payload: { round: 1, usage, costUsd: 0.001 } },
  { kind: 'inject', payload: { type: 'steer', messageId: 'm1', text: 'stop' } },
  { kind: 'retry', payload: { round: 2, attempt: 2 } },
  { kind: 'model_error', payload: { round: 2, error: 'network', nextAttempt: 3 } },
  {
    kind: 'compact',
    payload: { phase: 'committed', compactionId: 'x/compact/1', tokensBefore: 9000, tokensAfter: 4000 },
  },
  { kind: 'exec', payload: { phase: 'output', execId: 'e1', backend: 'local', text: 'line\n' } },
  { kind: 'approval', payload: { phase: 'requested', callId: 'tc_000000000001', tool: 'web_fetch' } },
  { kind: 'budget', payload: { phase: 'warning', budget: 'tenant acme, per day', capUsd: 5, usedUsd: 4.2 } },
  { kind: 'done', payload: { turnId: 'turn_1', answer: 'a', iterations: 1, usage, completionPath: 'complete' } },
];

test('every kind of the protocol has a sample, and every sample parses back', () => {
  assert.deepEqual([...new Set(SAMPLES.map((s) => s.kind))].sort(), [...STREAM_EVENT_KINDS].sort());
  for (const s of SAMPLES) {
    const e = parseStreamEvent({
      ...s,
      conversationId: 'c',
      seq: 3,
      ts: '2026-01-01T00:00:00.000Z',
      turnId: 'turn_1',
      attempt: 1,
    });
    assert.equal(e.kind, s.kind);
    assert.deepEqual(e.payload, s.payload);
  }
});

test('malformed events are refused with a clear error naming the event and the field', () => {
  const bad = [
    { kind: 'delta', payload: { text: 'x' } }, // no channel
    { kind: 'delta', channel: 'secret', payload: { text: 'x' } },
    { kind: 'compact', payload: { phase: 'exploded' } },
    { kind: 'usage', payload: { round: 1, usage: { outputTokens: 1 } } },
    { kind: 'no.such.kind', payload: {} },
  ];
  for (const b of bad) {
    assert.equal(StreamEventBodySchema.safeParse(b).success, false, JSON.stringify(b));
    assert.throws(
      () => parseStreamEvent({ ...b, conversationId: 'c', seq: 9, ts: 't' }),
      /invalid stream event .* #9 of c: /,
    );
  }
});

test('the CLI renderer and the gateway handle every kind; SSE round-trips every kind', () => {
  const render = createLiveRenderer(() => undefined, {});
  for (const s of SAMPLES) {
    const e = { ...s, conversationId: 'c', seq: 4, ts: '2026-01-01T00:00:00.000Z', turnId: 'turn_1', attempt: 1 };
    render(e);
    assert.ok(protocolEvent(e).event);
    assert.deepEqual(fromSseMessage(toSseMessage(e), 'c')?.kind, s.kind);
  }
});
