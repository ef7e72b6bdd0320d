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
import { callKindOf, cassetteKey, describeKey, firstTrialKey, requestShape } from '../../../core/evals/cassette';

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

test('cassette keys and request shapes: run-specific ids and times do not change the shape, content does', () => {
  assert.equal(callKindOf({ round: 3, mode: 'normal' }), 'round:3');
  assert.equal(callKindOf({ round: 4, mode: 'finalize' }), 'round:4:finalize');
  assert.equal(callKindOf({ purpose: 'structured', name: 'conversation_title' }), 'structured:conversation_title');
  assert.equal(callKindOf({ purpose: 'summarize', kind: 'range' }), 'summarize:range');
  assert.equal(callKindOf({ purpose: 'judge' }), 'judge');
  const key = cassetteKey({ caseId: 'refund-policy', trial: 2, turn: 'turn_1', call: 'round:3' });
  assert.equal(key, 'refund-policy/t2/turn_1/round:3');
  assert.equal(firstTrialKey(key), 'refund-policy/t1/turn_1/round:3');
  assert.equal(describeKey(key), 'case refund-policy trial 2, turn_1 round:3');
  const req = (conv: string, ts: string, plan: string, text = 'hello') => ({
    system: [{ text: `now ${ts}` }],
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: `${text} ${conv} blk_${plan}a tc_${plan}b plan:turn_1:${plan}` }],
      },
    ],
  });
  const a = requestShape(req('eval~s~run_1.c.t1', '2026-11-27T11:00:00.123Z', '0a1b2c3d'), 'eval~s~run_1.c.t1');
  const b = requestShape(req('eval~s~run_2.c.t1', '2026-11-28 09:15 UTC', 'ffee0011'), 'eval~s~run_2.c.t1');
  assert.equal(a, b);
  const c = requestShape(req('eval~s~run_2.c.t1', '2026-11-28T09:15:00Z', 'ffee0011', 'hullo'), 'eval~s~run_2.c.t1');
  assert.notEqual(a, c);
});
