/**
 * What to do after a failed decision round. Pure function of counters and limits.
 *
 * A failed decision is retried while `retries < maxDecisionRetries` AND
 * `iteration + 1 < maxIterations`; otherwise the turn exits cleanly with an
 * explanatory answer (never a crash, never an endless loop).
 */
import type { Notice } from './notice';

export const DEFAULT_MAX_DECISION_RETRIES = 2;
export const DEFAULT_MAX_ITERATIONS = 15;

export interface DecisionRetryState {
  /** Failed decision rounds retried so far in this turn. */
  retries: number;
  /** 0-based index of the round that just failed. */
  iteration: number;
  maxDecisionRetries?: number;
  maxIterations?: number;
}

export type DecisionFailureOutcome =
  | { kind: 'retry'; retries: number; nextIteration: number }
  | { kind: 'exit'; reason: 'decision_retries_exhausted' | 'iteration_limit'; answer: string };

function assertCount(name: string, v: number, min: number): void {
  if (!Number.isInteger(v) || v < min) throw new Error(`decision retry policy: ${name} must be an integer >= ${min}, got ${v}`);
}

export function afterDecisionFailure(state: DecisionRetryState, notices: readonly Notice[] = []): DecisionFailureOutcome {
  const maxRetries = state.maxDecisionRetries ?? DEFAULT_MAX_DECISION_RETRIES;
  const maxIterations = state.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  assertCount('retries', state.retries, 0);
  assertCount('iteration', state.iteration, 0);
  assertCount('maxDecisionRetries', maxRetries, 0);
  assertCount('maxIterations', maxIterations, 1);

  const retriesLeft = state.retries < maxRetries;
  const roundsLeft = state.iteration + 1 < maxIterations;
  if (retriesLeft && roundsLeft) return { kind: 'retry', retries: state.retries + 1, nextIteration: state.iteration + 1 };

  const reason = retriesLeft ? 'iteration_limit' : 'decision_retries_exhausted';
  const codes = [...new Set(notices.map((n) => n.code))];
  const why = codes.length ? ` (last problems: ${codes.join(', ')})` : '';
  const answer =
    reason === 'decision_retries_exhausted'
      ? `I could not produce a valid next step after ${state.retries + 1} attempts${why}, so I stopped here. Please try again or rephrase the request.`
      : `I reached the limit of ${maxIterations} rounds for this turn before producing a valid next step${why}, so I stopped here. Please continue in a new message.`;
  return { kind: 'exit', reason, answer };
}
