import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, emptyTurn } from '../../../client/web/live';

const delta = (id: string, text: string) => ({ event: 'answer', id, data: { phase: 'delta', text } });

test('the live turn drops replayed events by id, and takes reissued offsets again after a rewind', () => {
  let t = emptyTurn();
  for (const [id, text] of [
    ['1', 'a'],
    ['2', 'b'],
    ['3', 'c'],
    ['2', 'b'], // a replay after a reconnect: ignored
  ] as const)
    t = apply(t, delta(id, text));
  assert.equal(t.answer, 'abc');
  // The stream lost offset 3 (Postgres crash): it rewinds to 2 and gives offset 3 out again.
  t = apply(t, { event: 'rewind', id: '2', data: { from: 3, to: 2 } });
  t = apply(t, delta('3', 'C'));
  assert.equal(t.answer, 'abcC', 'the reissued offset is new to the reader');
  assert.deepEqual([...t.seen].sort(), ['1', '2', '3']);
});

test('a plan step event sets the live plan', () => {
  const plan = { planId: 'p', steps: [{ n: 1, text: 'x', status: 'done' }], state: 'complete' };
  const t = apply(emptyTurn(), { event: 'step', id: '1', data: { type: 'plan', plan } });
  assert.deepEqual(t.plan, plan);
});
