/** A turn's cancellation, its pure parts: the signal's payload, its wording, its block, the interrupted round, the fallback answer. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CancelRequestSchema,
  cancellationOf,
  cancelledBy,
  TURN_CANCELLED_KIND,
  turnCancelledBlock,
  turnCancelledBlockId,
} from '../../../core/turn/cancellation';
import { interruptedRoundBlock } from '../../../core/turn/round-blocks';
import { fallbackAnswer } from '../../../core/turn/finalize';
import { makeBlock } from '../../../core/timeline/block';

const TS = '2026-01-01T00:00:00.000Z';

test('the cancel payload: who, trimmed; a reason optional; bad input named', () => {
  assert.deepEqual(CancelRequestSchema.parse({ by: '  ann ' }), { by: 'ann' });
  assert.deepEqual(CancelRequestSchema.parse({ by: 'ann', reason: 'late' }), { by: 'ann', reason: 'late' });
  const empty = CancelRequestSchema.safeParse({ by: ' ' });
  assert.equal(empty.success, false);
  assert.match(empty.error!.issues[0]!.message, /by is empty/);
  assert.equal(CancelRequestSchema.safeParse({ by: 'ann', reason: 'x'.repeat(501) }).success, false);
  assert.equal(CancelRequestSchema.safeParse({ by: 'ann', extra: 1 }).success, false);
});

test('"cancelled by <who>", with the reason when there is one', () => {
  assert.equal(cancelledBy({ by: 'ann' }), 'cancelled by ann');
  assert.equal(cancelledBy({ by: 'key k1', reason: 'wrong question' }), 'cancelled by key k1: wrong question');
});

test("the turn's cancellation block: one id per turn, read back as the request, never a steer", () => {
  const b = turnCancelledBlock('turn_2', { by: 'ann', reason: 'late' }, TS);
  assert.equal(b.id, turnCancelledBlockId('turn_2'));
  assert.equal(b.type, 'system.message');
  assert.equal(b.meta['kind'], TURN_CANCELLED_KIND);
  assert.match(b.text ?? '', /cancelled by ann: late/);
  assert.doesNotMatch(b.text ?? '', /steered|by a steer/);
  assert.deepEqual(cancellationOf(b), { by: 'ann', reason: 'late' });
  assert.equal(turnCancelledBlock('turn_2', { by: 'bob' }, TS).id, b.id, 'a second cancel is the same block');
  assert.equal(cancellationOf(undefined), undefined);
  const other = makeBlock({ type: 'system.message', author: 'system', turn_id: 'turn_2', ts: TS, text: 'x' });
  assert.equal(cancellationOf(other), undefined);
});

test('an interrupted round says a steer only when it was one', () => {
  const steered = interruptedRoundBlock('turn_1', 2, TS);
  assert.equal(steered.text, '(interrupted by a steer)');
  const cancelled = interruptedRoundBlock('turn_1', 2, TS, { by: 'ann' });
  assert.equal(cancelled.text, '(interrupted: the turn was cancelled by ann)');
  assert.equal(cancelled.meta['cause'], 'cancel');
  assert.equal(cancelled.id, steered.id, 'one marker per round either way');
});

test("a cancelled turn's fallback answer says who cancelled it and what it did", () => {
  const call = makeBlock({
    type: 'react.tool.call',
    author: 'assistant',
    turn_id: 'turn_1',
    ts: TS,
    key: 'c1',
    text: JSON.stringify({ tool_id: 'web.fetch' }),
  });
  const text = fallbackAnswer([call], {
    completionPath: 'cancelled',
    rounds: 1,
    answer: '',
    cancelled: { by: 'ann', reason: 'late' },
  });
  assert.equal(text, 'This turn was cancelled by ann: late before I finished. What I did: 1. web.fetch.');
});
