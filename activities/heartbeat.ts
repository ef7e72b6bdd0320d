/**
 * Runs an activity body while heartbeating every second, so a worker that dies mid-call is
 * noticed within the activity's heartbeat timeout instead of its start-to-close timeout.
 */
import { Context } from '@temporalio/activity';

export async function heartbeating<T>(fn: () => Promise<T>, details?: () => unknown, everyMs = 1000): Promise<T> {
  const ctx = Context.current();
  // A local activity cannot heartbeat (its workflow task is its liveness); it still gets cancellation.
  if (ctx.info.isLocal) return fn();
  const beat = () => (details ? ctx.heartbeat(details()) : ctx.heartbeat());
  beat();
  const timer = setInterval(beat, everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
