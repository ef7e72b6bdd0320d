/**
 * Runs an activity body while heartbeating every second, so a worker that dies mid-call is
 * noticed within the activity's heartbeat timeout instead of its start-to-close timeout.
 *
 * The body gets `progress(details)`: a heartbeat with those details at once when none was
 * recorded for `minGapMs` (250 ms), else just the details the timer repeats from then on
 * (Temporal's core sends at most one per throttle interval to the server anyway). A model stream
 * reports progress per chunk: recording each chunk cost ~4 s of the worker's main thread per 75 s
 * with 300 streaming turns (encode, hand to core, for a beat core then drops), so chunks closer
 * than 250 ms only update the details. Folding ALL progress into the 1 s timer was tried before: a
 * worker stopped without grace time then often let a streaming round run to its end instead of
 * cancelling it (test/integration/worker-versioning.test.ts failed 4 of 7 runs, once in CI); a
 * chunk after a quiet spell still heartbeats at once.
 *
 * The first beat comes after `everyMs`, or at the first progress `minGapMs` or more after the start,
 * not at the start: the server times a heartbeat timeout from the activity's start when nothing was
 * recorded, so an opening beat adds no liveness — only one more RPC and one more mutable-state
 * write per activity (most end well within a second). A stream whose first chunk comes within
 * `minGapMs` (a fast or cached call) therefore sends no beat for it; one whose first token takes
 * longer (a real model's usual) beats at that chunk as before.
 */
import { Context } from '@temporalio/activity';

export type Progress = (details: unknown) => void;

export async function heartbeating<T>(
  fn: (progress: Progress) => Promise<T>,
  details?: () => unknown,
  everyMs = 1000,
  minGapMs = 250,
): Promise<T> {
  const ctx = Context.current();
  // A local activity cannot heartbeat (its workflow task is its liveness); it still gets cancellation.
  if (ctx.info.isLocal) return fn(() => undefined);
  let latest: { details: unknown } | undefined;
  // Counted from the start: the server's heartbeat timeout runs from there too.
  let lastBeatAt = performance.now();
  const record = (d?: unknown) => {
    lastBeatAt = performance.now();
    if (d === undefined) ctx.heartbeat();
    else ctx.heartbeat(d);
  };
  const progress: Progress = (d) => {
    latest = { details: d };
    if (performance.now() - lastBeatAt >= minGapMs) record(d);
  };
  const beat = () => record(latest ? latest.details : details?.());
  const timer = setInterval(beat, everyMs);
  try {
    return await fn(progress);
  } finally {
    clearInterval(timer);
  }
}
