/**
 * Why an activity's cancellation signal fired. A steer (the workflow cancelled the activity) is
 * acknowledged with a CancelledFailure and recorded; a worker shutting down without grace time is
 * not a steer: the attempt fails retryably, records nothing, and Temporal retries it on the next
 * worker.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';

/** A retryable failure when the cancellation comes from this worker shutting down, else undefined. */
export function workerShutdownFailure(what: string): ApplicationFailure | undefined {
  if (!Context.current().cancellationDetails?.workerShutdown) return undefined;
  return ApplicationFailure.retryable(
    `${what}: the worker shut down mid-attempt; retried on another worker`,
    'WorkerShutdown',
  );
}
