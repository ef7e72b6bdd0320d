import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareRuns,
  exitCodeOf,
  passAtK,
  passHatK,
  percentile,
  scoreTrial,
  summariseRun,
  trialSummary,
  type TrialRecord,
} from '../../../core/evals/aggregate';
import type { TrialObservation } from '../../../core/evals/check';

const obs: TrialObservation = {
  calls: [],
  answers: ['done'],
  cited: [[]],
  sources: [],
  notices: [],
  rounds: 1,
  tokens: 10,
  costUsd: 0,
  wallMs: 100,
  files: [],
};

test('a trial passes when every check passes; a failed turn is a failing check', () => {
  const v = scoreTrial({ expect: { answer: { contains: ['done'] } } }, obs);
  assert.deepEqual([v.pass, v.passed, v.total], [true, 2, 2]);
  assert.equal(trialSummary('refund-policy', 2, v), 'case refund-policy trial 2: pass 2/2 checks');
  const failed = scoreTrial({ expect: {} }, { ...obs, failure: 'cassette mismatch at round 2' });
  assert.equal(failed.pass, false);
  assert.equal(failed.checks[0]!.observed, 'cassette mismatch at round 2');
});

test('pass@k and pass^k', () => {
  assert.equal(passAtK(4, 1, 4), 1);
  assert.equal(passHatK(4, 1, 4), 0);
  assert.equal(passHatK(4, 4, 4), 1);
  assert.equal(passAtK(4, 0, 4), 0);
  assert.ok(Math.abs(passAtK(4, 2, 1) - 0.5) < 1e-9);
  assert.ok(Math.abs(passHatK(4, 2, 2) - 1 / 6) < 1e-9);
});

test('percentiles by nearest rank', () => {
  assert.equal(percentile([], 0.5), 0);
  assert.equal(percentile([5, 1, 3], 0.5), 3);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95), 10);
});

const rec = (caseId: string, trial: number, pass: boolean): TrialRecord => ({
  caseId,
  trial,
  pass,
  passed: pass ? 1 : 0,
  total: 1,
  checks: [{ name: 'answer.regex', pass, expected: 'matches /x/', observed: '"y"' }],
  rounds: 2,
  tokens: 100,
  costUsd: 0.01,
  wallMs: 1000 * trial,
  conversationId: `c-${caseId}-${trial}`,
  workflowId: `w-${caseId}-${trial}`,
});

test('run summary, comparison and exit code', () => {
  const base = summariseRun([rec('a', 1, true), rec('a', 2, true), rec('b', 1, false)]);
  assert.equal(base.passedCases, 1);
  assert.deepEqual(base.cases[1]!.failures, ['trial 1: answer.regex: expected matches /x/, observed "y"']);
  assert.equal(exitCodeOf(base), 1);
  const cur = summariseRun([rec('a', 1, true), rec('a', 2, false), rec('b', 1, true), rec('c', 1, true)]);
  const changes = compareRuns(base, cur);
  assert.deepEqual(
    changes.map((c) => [c.caseId, c.kind]),
    [
      ['a', 'regression'],
      ['b', 'improvement'],
      ['c', 'new'],
    ],
  );
  const allPass = summariseRun([rec('a', 1, true)]);
  assert.equal(exitCodeOf(allPass), 0);
  assert.equal(exitCodeOf(allPass, [{ caseId: 'a', kind: 'regression' }]), 1);
});
