/**
 * The chat's conversation stream (apps/web/conversation-stream.ts, live.ts): events are routed by
 * their turn id, so a turn's output never shows under another turn's prompt (issue 41 item 4); a
 * model error names its cause and the next attempt, and clears with the next output; an approval marks the call as
 * waiting for a person; a tool's run time comes from the event; a failure is one clean line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { liveEvent, type LiveEvent } from '../../../apps/web/live';
import { ended, pendingTurn, routeEvent } from '../../../apps/web/conversation-stream';
import { errorLine } from '../../../apps/web/error-line';
import { retryLine } from '../../../apps/web/retry-line';
import { toSseMessage } from '../../../apps/gateway/protocol';
import { parseStreamEvent } from '../../../core/stream/events';

const TS = '2026-01-01T00:00:00.000Z';
const sse = (seq: number, turnId: string, raw: Record<string, unknown>, ts = TS, attempt = 1): LiveEvent => {
  const e = parseStreamEvent({ conversationId: 'c', seq, ts, turnId, attempt, ...raw });
  return liveEvent(toSseMessage(e), 'c')!;
};
const delta = (seq: number, turnId: string, text: string) =>
  sse(seq, turnId, { kind: 'delta', channel: 'answer', payload: { text } });

test("each turn's events fold into that turn only: the next turn's answer never lands under the running one", () => {
  let turns = new Map([
    ['turn_1', pendingTurn({ turnId: 'turn_1', turnIndex: 1, workflowId: 'w1', status: 'running' })],
  ]);
  turns = routeEvent(turns, delta(1, 'turn_1', 'first '));
  turns = routeEvent(turns, delta(2, 'turn_1', 'answer'));
  // A turn queued from another tab starts and streams: its text is its own.
  turns = routeEvent(
    turns,
    sse(3, 'turn_2', {
      kind: 'phase',
      payload: { phase: 'turn.start', turnId: 'turn_2', turnIndex: 2, workflowId: 'w2' },
    }),
  );
  turns = routeEvent(turns, delta(4, 'turn_2', 'second'));
  assert.equal(turns.get('turn_1')!.answer, 'first answer');
  assert.equal(turns.get('turn_2')!.answer, 'second');
  assert.equal(turns.get('turn_2')!.turnIndex, 2);
  // The first turn ends; the second still runs.
  const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
  turns = routeEvent(
    turns,
    sse(5, 'turn_1', {
      kind: 'done',
      payload: { turnId: 'turn_1', answer: 'first answer', iterations: 1, usage, completionPath: 'complete' },
    }),
  );
  assert.equal(ended(turns.get('turn_1')!), true);
  assert.equal(ended(turns.get('turn_2')!), false);
  // A rewind reaches every turn: the offsets after it are taken again.
  turns = routeEvent(turns, liveEvent({ event: 'rewind', id: '3', data: JSON.stringify({ from: 4, to: 3 }) }, 'c')!);
  turns = routeEvent(turns, delta(4, 'turn_2', '!'));
  assert.equal(turns.get('turn_2')!.answer, 'second!');
});

test('a model error names the cause and the next attempt, kept through its start, cleared with output', () => {
  let turns = routeEvent(new Map(), delta(1, 'turn_1', 'partial'));
  // Attempt 1 failed to reach the model: it says so before Temporal runs attempt 2.
  turns = routeEvent(
    turns,
    sse(2, 'turn_1', { kind: 'model_error', payload: { round: 1, error: 'network', nextAttempt: 2 } }),
  );
  assert.equal(retryLine(turns.get('turn_1')!.retrying!), 'model unreachable, retrying (attempt 2)');
  // Attempt 2 starts (its retry marker): the cause stays, the failed attempt's partial output goes.
  turns = routeEvent(turns, sse(3, 'turn_1', { kind: 'retry', payload: { round: 1, attempt: 2 } }, TS, 2));
  let t = turns.get('turn_1')!;
  assert.equal(t.answer, '');
  assert.equal(retryLine(t.retrying!), 'model unreachable, retrying (attempt 2)');
  turns = routeEvent(
    turns,
    sse(
      4,
      'turn_1',
      { kind: 'model_error', payload: { round: 1, error: 'overloaded', status: 529, nextAttempt: 3 } },
      TS,
      2,
    ),
  );
  assert.equal(retryLine(turns.get('turn_1')!.retrying!), 'model overloaded, retrying (attempt 3)');
  turns = routeEvent(turns, delta(5, 'turn_1', 'back'));
  t = turns.get('turn_1')!;
  assert.equal(t.retrying, undefined);
  assert.equal(t.answer, 'back');
});

test('an approval request makes the turn wait for you until it is decided; the tool time is the run time', () => {
  const start = sse(1, 'turn_1', {
    kind: 'step',
    payload: { phase: 'iteration.start', round: 1, tool: 'exec.python', callId: 'c1', params: {} },
  });
  let turns = routeEvent(new Map(), start);
  turns = routeEvent(
    turns,
    sse(2, 'turn_1', { kind: 'approval', payload: { phase: 'requested', callId: 'c1', tool: 'exec.python' } }),
  );
  assert.deepEqual(turns.get('turn_1')!.awaiting, ['c1']);
  turns = routeEvent(
    turns,
    sse(3, 'turn_1', { kind: 'approval', payload: { phase: 'decided', callId: 'c1', tool: 'exec.python' } }),
  );
  assert.deepEqual(turns.get('turn_1')!.awaiting, []);
  // Done a minute after it started (the person took that long): the card shows the run's 42 ms.
  turns = routeEvent(
    turns,
    sse(
      4,
      'turn_1',
      { kind: 'step', payload: { phase: 'iteration.done', callId: 'c1', ok: true, durationMs: 42 } },
      '2026-01-01T00:01:00.000Z',
    ),
  );
  assert.equal(turns.get('turn_1')!.tools[0]!.durationMs, 42);
});

test('a failure chain is one clean line: wrappers and repeats dropped', () => {
  assert.equal(
    errorLine('Activity task failed ← Anthropic connection error ← Anthropic connection error'),
    'Anthropic connection error',
  );
  assert.equal(
    errorLine('Workflow execution failed ← unknown agent "nosuch" (this worker has: default)'),
    'unknown agent "nosuch" (this worker has: default)',
  );
  assert.equal(errorLine('plain message'), 'plain message');
});
