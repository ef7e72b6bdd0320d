/**
 * Runs an activity body while heartbeating every second, so a worker that dies mid-call is
 * noticed within the activity's heartbeat timeout instead of its start-to-close timeout.
 *
 * The body gets `progress(details)`: it only records the latest details, which the next timer beat
 * sends. A model stream reports progress per chunk — hundreds of times a second under load — and
 * every `Context.heartbeat` call converts its details to a payload, encodes a protobuf and crosses
 * into the native worker, while Temporal's core sends at most one heartbeat per throttle interval
 * (80 % of the heartbeat timeout) to the server anyway. Liveness and cancellation delivery come
 * from the timer; per-chunk calls only cost CPU.
 *
 * The first beat comes after `everyMs`, not at the start: the server times a heartbeat timeout from
 * the activity's start when nothing was recorded, so an opening beat adds no liveness — only one more
 * RPC and one more mutable-state write per activity (most rounds end well within a second).
 */
import { Context } from '@temporalio/activity';

export type Progress = (details: unknown) => void;

export async function heartbeating<T>(
  fn: (progress: Progress) => Promise<T>,
  details?: () => unknown,
  everyMs = 1000,
): Promise<T> {
  const ctx = Context.current();
  let latest: { details: unknown } | undefined;
  const progress: Progress = (d) => {
    latest = { details: d };
  };
  // A local activity cannot heartbeat (its workflow task is its liveness); it still gets cancellation.
  if (ctx.info.isLocal) return fn(progress);
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
