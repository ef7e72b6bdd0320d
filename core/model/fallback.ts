/**
 * Fallback chains: whether a failed model call moves on to the next model of its chain. A pure
 * function of the activity's attempt number, the entry that failed and the classified failure —
 * nothing else (no clock, no randomness, no memory of earlier attempts) — so a replayed or
 * retried activity takes the same path for the same failure.
 *
 * The conditions (defaults in DEFAULT_FALLBACK_POLICY):
 *   overloaded            → move on at once (529, 503 "overloaded");
 *   server / timeout / network → retry the same model first; move on from attempt
 *                           `serverAfterAttempts` on (Temporal's retry is the outer loop);
 *   rate_limit            → move on when the provider asks to wait `rateLimitMinRetryAfterMs` or
 *                           longer (a short wait is Temporal's retry with `nextRetryDelay`);
 *   auth / permission     → move on (this provider's credentials cannot answer; the next may);
 *   context_length        → move on to the first later entry whose context window is larger than
 *                           the failed one's; none: the failure stands (the turn compacts);
 *   anything else (bad_request, not_found, protocol, aborted) → the failure stands.
 * The last entry never moves on: its failure is the call's.
 */
import type { ProviderErrorKind } from './provider';

export interface FallbackPolicy {
  /** From this activity attempt on, a 5xx / timeout / cut connection moves on (default 2). */
  serverAfterAttempts: number;
  /** A 429 whose retry-after is at least this long moves on (default 30 s). */
  rateLimitMinRetryAfterMs: number;
  /** Kinds that never move on, whatever the rules say (e.g. `['auth']`). */
  never?: readonly ProviderErrorKind[];
}

export const DEFAULT_FALLBACK_POLICY: FallbackPolicy = Object.freeze({
  serverAfterAttempts: 2,
  rateLimitMinRetryAfterMs: 30_000,
});

export interface FallbackFailure {
  kind: ProviderErrorKind;
  status?: number;
  retryAfterMs?: number;
}

export interface FallbackInput {
  /** The activity's attempt (1-based). */
  attempt: number;
  /** The chain entry that failed (0: the primary). */
  index: number;
  /** Context windows of the chain's entries, in order (undefined: unknown). */
  contextWindows: ReadonlyArray<number | undefined>;
  failure: FallbackFailure;
  policy?: FallbackPolicy;
}

export type FallbackDecision = { next: number; reason: string } | { next: undefined; reason: string };

export function decideFallback(input: FallbackInput): FallbackDecision {
  const { attempt, index, failure, contextWindows } = input;
  const policy = input.policy ?? DEFAULT_FALLBACK_POLICY;
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error(`decideFallback: attempt must be ≥ 1, got ${attempt}`);
  const last = contextWindows.length - 1;
  if (index < 0 || index > last) throw new Error(`decideFallback: index ${index} outside the chain of ${last + 1}`);
  const stay = (reason: string): FallbackDecision => ({ next: undefined, reason });
  const move = (reason: string, next = index + 1): FallbackDecision => ({ next, reason });
  if (index === last) return stay('the last model of the chain');
  if (policy.never?.includes(failure.kind)) return stay(`${failure.kind} never moves on (policy)`);
  switch (failure.kind) {
    case 'overloaded':
      return move('overloaded');
    case 'server':
    case 'timeout':
    case 'network':
      return attempt >= policy.serverAfterAttempts
        ? move(`${failure.kind} on attempt ${attempt} (moves on from attempt ${policy.serverAfterAttempts})`)
        : stay(`${failure.kind} on attempt ${attempt}: retried on the same model first`);
    case 'rate_limit': {
      const wait = failure.retryAfterMs;
      return wait !== undefined && wait >= policy.rateLimitMinRetryAfterMs
        ? move(`rate limited for ${wait} ms (≥ ${policy.rateLimitMinRetryAfterMs} ms)`)
        : stay(`rate limited for ${wait ?? 'an unknown time'}${wait !== undefined ? ' ms' : ''}: waited out`);
    }
    case 'auth':
    case 'permission':
      return move(failure.kind);
    case 'context_length': {
      const own = contextWindows[index];
      for (let j = index + 1; j <= last; j++) {
        const w = contextWindows[j];
        if (w !== undefined && (own === undefined || w > own)) return move(`context length: a larger window (${w})`, j);
      }
      return stay('context length: no later model has a larger window');
    }
    default:
      return stay(`${failure.kind} does not move on`);
  }
}
