/**
 * Maps failures inside activities to Temporal failures: classified provider errors become
 * retryable (with the provider's retry-after as next retry delay) or non-retryable failures.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../../core/model/provider';

export function toActivityFailure(err: unknown): Error {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ProviderError) {
    const type = `Provider.${err.kind}`;
    const message = `${err.message}${err.status ? ` (HTTP ${err.status})` : ''}`;
    if (!err.retryable) return ApplicationFailure.create({ type, message, nonRetryable: true, cause: err });
    return ApplicationFailure.create({ type, message, nonRetryable: false, nextRetryDelay: err.retryAfterMs, cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
