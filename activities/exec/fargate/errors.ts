/**
 * Classification of AWS SDK errors for Temporal: throttling, 5xx and network errors are retryable;
 * validation, missing resources and access errors are not. SDK retries are off (`maxAttempts: 1`)
 * so Temporal's retry policy is the only one.
 */
import { ApplicationFailure } from '@temporalio/common';

const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'SlowDown',
  'ServerException',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'TimeoutError',
  'LimitExceededException',
]);
const THROTTLING = /throttl|toomanyrequests|requestlimitexceeded|slowdown|limitexceeded/i;
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
]);

interface AwsErrorShape {
  name?: string;
  message?: string;
  code?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

export function isAbort(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name;
  return name === 'AbortError' || name === 'CancelledFailure';
}

/** Turns an SDK error of `operation` into an ApplicationFailure (abort errors pass through unchanged). */
export function classifyAwsError(operation: string, err: unknown): unknown {
  if (isAbort(err) || err instanceof ApplicationFailure) return err;
  const e = (err ?? {}) as AwsErrorShape;
  const name = e.name ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  const throttled = !!e.$retryable?.throttling || THROTTLING.test(name);
  const retryable =
    throttled ||
    RETRYABLE_NAMES.has(name) ||
    e.$fault === 'server' ||
    (status !== undefined && status >= 500) ||
    NETWORK_CODES.has(e.code ?? '') ||
    !!e.$retryable;
  return ApplicationFailure.create({
    type: `aws.${name}`,
    message: `${operation} failed: ${name}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(err)}`,
    nonRetryable: !retryable,
    // Throttling: wait longer than the policy's first interval; otherwise the policy decides.
    nextRetryDelay: throttled ? '5 seconds' : undefined,
    cause: err instanceof Error ? err : undefined,
  });
}

/** Runs one SDK call, classifying its errors. */
export async function aws<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classifyAwsError(operation, err);
  }
}
