/**
 * The turn loop's "what next" rules, pure (TurnWorkflow applies them; unit and property tests
 * pin them down):
 * - before a round: a steer ends the turn through one bounded finalize round — unless a followup
 *   is queued, which wins and the loop goes on; otherwise an exhausted budget ends the turn at
 *   the iteration cap (a finalize round runs even on an exhausted budget: it consumes none);
 * - after a round: a round a steer cancelled goes round again (to its finalize round); invalid
 *   decisions end the turn after MAX_DECISION_RETRIES retries or on an exhausted budget; a final
 *   answer ends the turn — unless a followup arrived during a normal round (the answer is kept as
 *   the draft and the turn continues); tool calls continue the loop, and a multi-action bundle's
 *   `final` ends it after its calls (same followup rule) unless a steer interrupted the calls.
 * A followup also grants one bonus round (IterationBudget), so the loop always ends within
 * base + bonus rounds plus one finalize round per steer.
 */
import type { CompletionPath } from './contracts';

/** Invalid decisions tolerated before the turn ends with `decision_failure`. */
export const MAX_DECISION_RETRIES = 2;

export interface BeforeRound {
  /** A steer arrived and has not had its finalize round yet. */
  steerRequested: boolean;
  /** A followup is waiting (received, or handed to a decide call that has not succeeded). */
  followupQueued: boolean;
  /** The budget has no normal round left. */
  exhausted: boolean;
}

export type RoundStep = { kind: 'stop'; completionPath: 'iteration_cap' } | { kind: 'decide'; finalize: boolean };

export function nextRound(s: BeforeRound): RoundStep {
  const finalize = s.steerRequested && !s.followupQueued;
  if (!finalize && s.exhausted) return { kind: 'stop', completionPath: 'iteration_cap' };
  return { kind: 'decide', finalize };
}

/** What a round came to, as far as the loop cares. */
export type RoundResult =
  /** A steer cancelled the decide call. */
  | { kind: 'steered' }
  | { kind: 'invalid' }
  | { kind: 'final'; action: 'complete' | 'exit' }
  /** Tool calls ran (`interrupted`: a steer cancelled one); `final` ends a multi-action bundle. */
  | { kind: 'tools'; interrupted: boolean; final?: { action: 'complete' | 'exit' } };

export interface AfterRound {
  finalize: boolean;
  /** Invalid decisions so far, before this round. */
  failures: number;
  exhausted: boolean;
  /** A followup arrived while the round ran. */
  followupArrived: boolean;
}

export type AfterStep =
  { kind: 'continue'; failures: number } | { kind: 'done'; completionPath: CompletionPath; failures: number };

export function afterRound(result: RoundResult, s: AfterRound): AfterStep {
  const go = (failures = s.failures): AfterStep => ({ kind: 'continue', failures });
  const done = (completionPath: CompletionPath, failures = s.failures): AfterStep => ({
    kind: 'done',
    completionPath,
    failures,
  });
  switch (result.kind) {
    case 'steered':
      return go();
    case 'invalid': {
      const failures = s.failures + 1;
      return failures > MAX_DECISION_RETRIES || s.exhausted ? done('decision_failure', failures) : go(failures);
    }
    case 'final':
      if (!s.finalize && s.followupArrived) return go();
      return done(s.finalize ? 'steer_finalize' : result.action);
    case 'tools':
      if (result.interrupted || !result.final || s.followupArrived) return go();
      return done(result.final.action);
  }
}
