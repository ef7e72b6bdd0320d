import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { afterRound, MAX_DECISION_RETRIES, nextRound, type RoundResult } from '../../../core/turn/next-step';
import { IterationBudget } from '../../../core/turn/budget';
import type { CompletionPath } from '../../../core/turn/contracts';

const before = (o: Partial<Parameters<typeof nextRound>[0]> = {}) => ({
  steerRequested: false,
  followupQueued: false,
  exhausted: false,
  ...o,
});
const after = (o: Partial<Parameters<typeof afterRound>[1]> = {}) => ({
  finalize: false,
  failures: 0,
  exhausted: false,
  followupArrived: false,
  ...o,
});

test('nextRound: a normal round; the cap on an exhausted budget', () => {
  assert.deepEqual(nextRound(before()), { kind: 'decide', finalize: false });
  assert.deepEqual(nextRound(before({ exhausted: true })), { kind: 'stop', completionPath: 'iteration_cap' });
});

test('nextRound: a steer asks for a finalize round, even on an exhausted budget; a queued followup wins over it', () => {
  assert.deepEqual(nextRound(before({ steerRequested: true })), { kind: 'decide', finalize: true });
  assert.deepEqual(nextRound(before({ steerRequested: true, exhausted: true })), { kind: 'decide', finalize: true });
  assert.deepEqual(nextRound(before({ steerRequested: true, followupQueued: true })), {
    kind: 'decide',
    finalize: false,
  });
  assert.deepEqual(nextRound(before({ steerRequested: true, followupQueued: true, exhausted: true })), {
    kind: 'stop',
    completionPath: 'iteration_cap',
  });
});

test('afterRound: a steered round goes round again; tool rounds continue', () => {
  assert.deepEqual(afterRound({ kind: 'steered' }, after({ failures: 1 })), { kind: 'continue', failures: 1 });
  assert.deepEqual(afterRound({ kind: 'tools', interrupted: false }, after()), { kind: 'continue', failures: 0 });
  assert.deepEqual(afterRound({ kind: 'tools', interrupted: true, final: { action: 'complete' } }, after()), {
    kind: 'continue',
    failures: 0,
  });
});

test('afterRound: invalid decisions end the turn after MAX_DECISION_RETRIES retries or on an exhausted budget', () => {
  assert.equal(MAX_DECISION_RETRIES, 2);
  assert.deepEqual(afterRound({ kind: 'invalid' }, after()), { kind: 'continue', failures: 1 });
  assert.deepEqual(afterRound({ kind: 'invalid' }, after({ failures: 1 })), { kind: 'continue', failures: 2 });
  assert.deepEqual(afterRound({ kind: 'invalid' }, after({ failures: 2 })), {
    kind: 'done',
    completionPath: 'decision_failure',
    failures: 3,
  });
  assert.deepEqual(afterRound({ kind: 'invalid' }, after({ exhausted: true })), {
    kind: 'done',
    completionPath: 'decision_failure',
    failures: 1,
  });
});

test('afterRound: a final answer ends the turn; in a normal round a newly arrived followup continues it', () => {
  assert.deepEqual(afterRound({ kind: 'final', action: 'complete' }, after()), {
    kind: 'done',
    completionPath: 'complete',
    failures: 0,
  });
  assert.deepEqual(afterRound({ kind: 'final', action: 'exit' }, after()), {
    kind: 'done',
    completionPath: 'exit',
    failures: 0,
  });
  assert.deepEqual(afterRound({ kind: 'final', action: 'complete' }, after({ followupArrived: true })), {
    kind: 'continue',
    failures: 0,
  });
  assert.deepEqual(afterRound({ kind: 'final', action: 'complete' }, after({ finalize: true })), {
    kind: 'done',
    completionPath: 'steer_finalize',
    failures: 0,
  });
  assert.deepEqual(afterRound({ kind: 'final', action: 'exit' }, after({ finalize: true, followupArrived: true })), {
    kind: 'done',
    completionPath: 'steer_finalize',
    failures: 0,
  });
});

test('afterRound: a multi-action bundle’s final ends the turn after its calls unless a followup arrived', () => {
  assert.deepEqual(afterRound({ kind: 'tools', interrupted: false, final: { action: 'complete' } }, after()), {
    kind: 'done',
    completionPath: 'complete',
    failures: 0,
  });
  assert.deepEqual(
    afterRound({ kind: 'tools', interrupted: false, final: { action: 'exit' } }, after({ followupArrived: true })),
    { kind: 'continue', failures: 0 },
  );
});

// ---- the loop, simulated with the workflow's own bookkeeping --------------------------------

type Outcome = 'invalid' | 'final' | 'tools' | 'tools_final';
interface Arrivals {
  steer: boolean;
  followup: boolean;
  /** A steer arriving in a normal round cancels its decide call (else it lands during the tools). */
  cancelsDecide: boolean;
  outcome: Outcome;
}

/** The workflow's loop over IterationBudget and the two pure functions; events arrive during rounds. */
function simulate(base: number, script: Arrivals[]) {
  const budget = new IterationBudget(base);
  let steerRequested = false;
  let pending = 0;
  let unconfirmed = 0;
  let failures = 0;
  let steers = 0;
  let rounds = 0;
  const log: Array<{ finalize: boolean; steerBefore: boolean; followupBefore: boolean }> = [];
  let completionPath: CompletionPath | undefined;
  while (completionPath === undefined) {
    if (rounds > 10_000) throw new Error('runaway loop');
    const step = nextRound({ steerRequested, followupQueued: pending + unconfirmed > 0, exhausted: budget.exhausted });
    if (step.kind === 'stop') {
      completionPath = step.completionPath;
      break;
    }
    log.push({ finalize: step.finalize, steerBefore: steerRequested, followupBefore: pending + unconfirmed > 0 });
    if (!step.finalize) budget.consume();
    if (step.finalize) steerRequested = false;
    unconfirmed += pending;
    pending = 0;
    // After the script runs out nothing arrives and the model keeps calling tools (the worst case).
    const a = script[rounds] ?? { steer: false, followup: false, cancelsDecide: false, outcome: 'tools' as const };
    rounds += 1;
    if (a.followup) {
      pending += 1;
      budget.grantFollowup();
    }
    const steeredNow = a.steer && !step.finalize;
    if (steeredNow) {
      steerRequested = true;
      steers += 1;
    }
    let result: RoundResult;
    if (steeredNow && a.cancelsDecide) result = { kind: 'steered' };
    else {
      unconfirmed = 0;
      if (a.outcome === 'invalid') result = { kind: 'invalid' };
      else if (a.outcome === 'final') result = { kind: 'final', action: 'complete' };
      else
        result = {
          kind: 'tools',
          interrupted: steeredNow,
          ...(a.outcome === 'tools_final' ? { final: { action: 'complete' as const } } : {}),
        };
    }
    const next = afterRound(result, {
      finalize: step.finalize,
      failures,
      exhausted: budget.exhausted,
      followupArrived: pending > 0,
    });
    failures = next.failures;
    if (next.kind === 'done') completionPath = next.completionPath;
  }
  return { completionPath, rounds, steers, budget, log };
}

const arrivals = fc.record({
  steer: fc.boolean(),
  followup: fc.boolean(),
  cancelsDecide: fc.boolean(),
  outcome: fc.constantFrom<Outcome>('invalid', 'final', 'tools', 'tools_final'),
});

test('property: the loop always ends within base + bonus rounds plus one finalize round per steer', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.array(arrivals, { maxLength: 60 }), (base, script) => {
      const run = simulate(base, script);
      assert.ok(run.completionPath);
      assert.ok(run.rounds <= run.budget.max + run.steers, `${run.rounds} rounds > ${run.budget.max} + ${run.steers}`);
      assert.ok(run.budget.max <= 2 * base, 'followups add at most the base in bonus rounds');
    }),
    { numRuns: 500 },
  );
});

test('property: without a steer or a followup the loop ends within base + 1 rounds and never finalizes', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.array(
        arrivals.map((a) => ({ ...a, steer: false, followup: false })),
        { maxLength: 40 },
      ),
      (base, script) => {
        const run = simulate(base, script);
        assert.ok(run.rounds <= base);
        assert.ok(run.log.every((r) => !r.finalize));
        assert.notEqual(run.completionPath, 'steer_finalize');
      },
    ),
  );
});

test('property: a steer is always followed by a finalize round unless a followup is queued; steer_finalize only after a steer', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10 }), fc.array(arrivals, { maxLength: 40 }), (base, script) => {
      const run = simulate(base, script);
      for (const r of run.log) assert.equal(r.finalize, r.steerBefore && !r.followupBefore);
      if (run.completionPath === 'steer_finalize') assert.ok(run.steers > 0);
    }),
    { numRuns: 500 },
  );
});

test('property: decision failures end the turn at the (MAX_DECISION_RETRIES + 1)th invalid decision at the latest', () => {
  fc.assert(
    fc.property(fc.integer({ min: 4, max: 20 }), (base) => {
      const run = simulate(
        base,
        Array.from({ length: 10 }, () => ({
          steer: false,
          followup: false,
          cancelsDecide: false,
          outcome: 'invalid' as const,
        })),
      );
      assert.equal(run.completionPath, 'decision_failure');
      assert.equal(run.rounds, MAX_DECISION_RETRIES + 1);
    }),
  );
});
