/**
 * Why an activity's cancellation signal fired. A steer (the workflow cancelled the activity) is
 * acknowledged with a CancelledFailure and recorded; a worker shutting down without grace time is
 * not a steer: the attempt fails retryably, records nothing, and Temporal retries it on the next
 * worker. Neither is an attempt the server gave up on — its heartbeat timed out (a stalled or
 * overloaded worker), it was reset, paused or is gone — which is retried by the server and must
 * not be recorded as a steer either (`cancellationCause`).
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';

/** A retryable failure when the cancellation comes from this worker shutting down, else undefined. */
export function workerShutdownFailure(what: string): ApplicationFailure | undefined {
  const ctx = Context.current();
  // The SDK aborts with CancelledFailure('WORKER_SHUTDOWN'); the details flag is set when the
  // core reports it too (either one is enough).
  const reason: unknown = ctx.cancellationSignal.reason;
  const shutdown =
    ctx.cancellationDetails?.workerShutdown === true ||
    (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN');
  if (!shutdown) return undefined;
  return ApplicationFailure.retryable(
    `${what}: the worker shut down mid-attempt; retried on another worker`,
    'WorkerShutdown',
  );
}

/** Why the signal fired, from the SDK's cancellation details (else the abort reason's message). */
export type CancellationCause = 'requested' | 'worker_shutdown' | 'timed_out' | 'not_found' | 'paused' | 'reset';

export function cancellationCause(): CancellationCause {
  const ctx = Context.current();
  const d = ctx.cancellationDetails;
  const reason: unknown = ctx.cancellationSignal.reason;
  const message = reason instanceof CancelledFailure ? reason.message : '';
  if (d?.workerShutdown || message === 'WORKER_SHUTDOWN') return 'worker_shutdown';
  if (d?.timedOut || message === 'TIMED_OUT') return 'timed_out';
  if (d?.notFound || message === 'NOT_FOUND') return 'not_found';
  if (d?.reset || message === 'RESET') return 'reset';
  if (d?.paused || message === 'PAUSED') return 'paused';
  return 'requested';
}

/**
 * A retryable failure when the attempt ended for any reason but the workflow asking (a steer or
 * a stop): the worker shutting down, the heartbeat timing out, a reset, a pause; else undefined.
 */
export function attemptLostFailure(what: string): ApplicationFailure | undefined {
  const cause = cancellationCause();
  if (cause === 'requested') return undefined;
  if (cause === 'worker_shutdown') return workerShutdownFailure(what);
  return ApplicationFailure.retryable(
    `${what}: this attempt ended (${cause.replace('_', ' ')}) without a steer; Temporal runs the next one`,
    'AttemptLost',
  );
}
