import { test } from 'node:test';
import assert from 'node:assert/strict';
import { afterDecisionFailure, DEFAULT_MAX_DECISION_RETRIES, DEFAULT_MAX_ITERATIONS, notice } from '../../../core/decision';

test('defaults: 2 decision retries, 15 iterations', () => {
  assert.equal(DEFAULT_MAX_DECISION_RETRIES, 2);
  assert.equal(DEFAULT_MAX_ITERATIONS, 15);
});

test('retried while retries < max_decision_retries and iteration+1 < max_iterations', () => {
  assert.deepEqual(afterDecisionFailure({ retries: 0, iteration: 0 }), { kind: 'retry', retries: 1, nextIteration: 1 });
  assert.deepEqual(afterDecisionFailure({ retries: 1, iteration: 1 }), { kind: 'retry', retries: 2, nextIteration: 2 });
  assert.equal(afterDecisionFailure({ retries: 2, iteration: 2 }).kind, 'exit');
});

test('a full failing sequence: 3 attempts, then a clean exit with an explanatory answer', () => {
  let retries = 0;
  const kinds: string[] = [];
  for (let iteration = 0; iteration < 10; iteration++) {
    const out = afterDecisionFailure({ retries, iteration }, [notice('unknown_tool', 'x'), notice('unknown_tool', 'y'), notice('invalid_json', 'z')]);
    kinds.push(out.kind);
    if (out.kind === 'exit') {
      assert.equal(out.reason, 'decision_retries_exhausted');
      assert.match(out.answer, /after 3 attempts \(last problems: unknown_tool, invalid_json\)/);
      break;
    }
    retries = out.retries;
  }
  assert.deepEqual(kinds, ['retry', 'retry', 'exit']);
});

test('the iteration budget also stops retries', () => {
  const out = afterDecisionFailure({ retries: 0, iteration: 14 });
  assert.equal(out.kind, 'exit');
  if (out.kind === 'exit') {
    assert.equal(out.reason, 'iteration_limit');
    assert.match(out.answer, /limit of 15 rounds/);
  }
  assert.equal(afterDecisionFailure({ retries: 0, iteration: 13 }).kind, 'retry');
  assert.equal(afterDecisionFailure({ retries: 0, iteration: 2, maxIterations: 3 }).kind, 'exit');
  assert.equal(afterDecisionFailure({ retries: 0, iteration: 0, maxDecisionRetries: 0 }).kind, 'exit');
  assert.equal(afterDecisionFailure({ retries: 4, iteration: 4, maxDecisionRetries: 5 }).kind, 'retry');
});

test('bad counters are readable errors', () => {
  assert.throws(() => afterDecisionFailure({ retries: -1, iteration: 0 }), /retries must be an integer >= 0/);
  assert.throws(() => afterDecisionFailure({ retries: 0, iteration: 0, maxIterations: 0 }), /maxIterations must be an integer >= 1/);
});
