/**
 * Runs an activity body while heartbeating every second, so a worker that dies mid-call is
 * noticed within the activity's heartbeat timeout instead of its start-to-close timeout.
 *
 * The body gets `progress(details)`: a heartbeat with those details at once (Temporal's core sends
 * at most one per throttle interval — 80 % of the heartbeat timeout — to the server), and the
 * details the timer repeats from then on. A model stream reports progress per chunk. Folding those
 * calls into the 1 s timer was tried: a worker stopped without grace time then often let a
 * streaming round run to its end instead of cancelling it (test/integration/worker-versioning.test.ts
 * failed 4 of 7 runs, once in CI; 9 of 9 passed with per-chunk calls), so they stay.
 *
 * The first beat comes after `everyMs` (or at the first progress), not at the start: the server
 * times a heartbeat timeout from the activity's start when nothing was recorded, so an opening beat
 * adds no liveness — only one more RPC and one more mutable-state write per activity (most end well
 * within a second).
 */
import { Context } from '@temporalio/activity';

export type Progress = (details: unknown) => void;

export async function heartbeating<T>(
  fn: (progress: Progress) => Promise<T>,
  details?: () => unknown,
  everyMs = 1000,
): Promise<T> {
  const ctx = Context.current();
  // A local activity cannot heartbeat (its workflow task is its liveness); it still gets cancellation.
  if (ctx.info.isLocal) return fn(() => undefined);
  let latest: { details: unknown } | undefined;
  const progress: Progress = (d) => {
    latest = { details: d };
    ctx.heartbeat(d);
  };
  const beat = () => {
    if (latest) ctx.heartbeat(latest.details);
    else if (details) ctx.heartbeat(details());
    else ctx.heartbeat();
  };
  const timer = setInterval(beat, everyMs);
  try {
    return await fn(progress);
  } finally {
    clearInterval(timer);
  }
}
