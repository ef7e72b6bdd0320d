/**
 * ProviderError → Temporal ApplicationFailure, for activities that call a model provider.
 *
 *   try { … provider.stream(…) … } catch (err) { throw toActivityFailure(err); }
 *
 * - retryable kinds (rate_limit, overloaded, server, timeout, network) → retryable failure; a
 *   provider `retry-after` becomes `nextRetryDelay`, overriding the retry policy's backoff for
 *   that attempt;
 * - everything else (bad_request, auth, permission, not_found, protocol, aborted) → non-retryable
 *   failure with a clear message;
 * - `type` is `Provider.<kind>` (workflows/turn/compaction-step.ts reads `Provider.context_length`); list
 *   NON_RETRYABLE_PROVIDER_FAILURE_TYPES in `nonRetryableErrorTypes` to be explicit;
 *   `details[0]` carries `{kind, status, retryAfterMs}`.
 * Anything that is not a ProviderError is returned unchanged (Temporal treats it as retryable).
 */
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError, type ProviderErrorKind } from '../../core/model/provider';

export const PROVIDER_FAILURE_TYPE_PREFIX = 'Provider.';

export function providerFailureType(kind: ProviderErrorKind): string {
  return `${PROVIDER_FAILURE_TYPE_PREFIX}${kind}`;
}

/** Failure types that are never retried (for RetryPolicy.nonRetryableErrorTypes). */
export const NON_RETRYABLE_PROVIDER_FAILURE_TYPES: readonly string[] = (
  ['bad_request', 'context_length', 'auth', 'permission', 'not_found', 'protocol', 'aborted'] as const
).map(providerFailureType);

export interface ProviderFailureDetails {
  kind: ProviderErrorKind;
  status: number | null;
  retryAfterMs: number | null;
}

export function providerErrorToFailure(err: ProviderError): ApplicationFailure {
  const details: ProviderFailureDetails = {
    kind: err.kind,
    status: err.status ?? null,
    retryAfterMs: err.retryAfterMs ?? null,
  };
  const message = err.retryable ? err.message : `${err.message} [non-retryable: ${err.kind}]`;
  return ApplicationFailure.create({
    message,
    type: providerFailureType(err.kind),
    nonRetryable: !err.retryable,
    details: [details],
    // Only a positive delay: Temporal (server 1.29.1) reads nextRetryDelay 0 as "no more retries".
    ...(err.retryable && err.retryAfterMs !== undefined && err.retryAfterMs > 0
      ? { nextRetryDelay: err.retryAfterMs }
      : {}),
    cause: err,
  });
}

/** Maps a ProviderError to an ApplicationFailure; returns any other value unchanged. */
export function toActivityFailure(err: unknown): unknown {
  return err instanceof ProviderError ? providerErrorToFailure(err) : err;
}
