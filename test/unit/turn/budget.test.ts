import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IterationBudget } from '../../../core/turn/budget';
import { envMaxIterations } from '../../../workers/worker';

test('the budget counts rounds and is exhausted at base + bonus', () => {
  const b = new IterationBudget(2);
  b.consume();
  b.consume();
  assert.equal(b.exhausted, true);
  assert.throws(() => b.consume(), /exhausted/);
  b.grantFollowup();
  assert.equal(b.exhausted, false);
  assert.deepEqual(b.snapshot(), { index: 2, max: 3, base: 2, bonus: 1 });
});

test('followup bonus is capped at the base; rebase re-caps it', () => {
  const b = new IterationBudget(2);
  for (let i = 0; i < 5; i++) b.grantFollowup();
  assert.equal(b.bonus, 2);
  b.rebase(1);
  assert.equal(b.bonus, 1);
  assert.equal(b.max, 2);
  assert.deepEqual(b.snapshot(), { index: 0, max: 2, base: 1, bonus: 1 });
});

test('invalid bases are refused with a clear error', () => {
  assert.throws(() => new IterationBudget(0), /positive integer/);
  assert.throws(() => new IterationBudget(1.5), /positive integer/);
  assert.throws(() => new IterationBudget(3).rebase(-1), /positive integer/);
});

test('AI_REACT_MAX_ITERATIONS resolution', () => {
  assert.equal(envMaxIterations(undefined), 15);
  assert.equal(envMaxIterations(''), 15);
  assert.equal(envMaxIterations('7'), 7);
  assert.throws(() => envMaxIterations('many'), /AI_REACT_MAX_ITERATIONS must be an integer/);
  assert.throws(() => envMaxIterations('0'), /from 1 to 100/);
});
