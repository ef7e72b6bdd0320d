/**
 * Why an activity's cancellation signal fired. A steer (the workflow cancelled the activity) is
 * acknowledged with a CancelledFailure and recorded; a worker shutting down without grace time is
 * not a steer: the attempt fails retryably, records nothing, and Temporal retries it on the next
 * worker.
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
