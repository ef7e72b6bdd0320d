/**
 * Awaits an exec to its terminal state: status polled with backoff, a heartbeat (with the handle,
 * so a retried attempt re-attaches) per poll, the sandbox stopped on cancellation or at the
 * deadline. Backend-agnostic; the Fargate backend needs it because a task runs remotely.
 */
import type { ExecBackend, ExecHandle } from '../backend';
import type { ExecStatus } from '../../../core/exec/status';
import { isTerminal, STOP_REASON_TIMEOUT } from '../../../core/exec/ecs-task-status';

export interface AwaitExecOptions {
  signal?: AbortSignal;
  /** Called after every poll with the handle and the latest status. */
  heartbeat?: (details: { handle: ExecHandle; status: ExecStatus }) => void;
  /** Epoch ms after which the exec is stopped as timed out. */
  deadlineMs?: number;
  initialPollMs?: number;
  maxPollMs?: number;
  /** How long to keep polling for STOPPED after a stop request, ms. */
  stopWaitMs?: number;
}

function sleep(msToWait: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, msToWait);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Resolves with the terminal status. On cancellation the sandbox is stopped, awaited (bounded by
 * `stopWaitMs`), and the abort reason is thrown.
 */
export async function awaitExec(
  backend: ExecBackend,
  handle: ExecHandle,
  opts: AwaitExecOptions = {},
): Promise<ExecStatus> {
  let wait = opts.initialPollMs ?? 250;
  const maxWait = opts.maxPollMs ?? 2000;
  let stopRequested: 'cancel' | 'timeout' | undefined;
  let stopDeadline = Infinity;
  for (;;) {
    const status = await backend.status(handle);
    opts.heartbeat?.({ handle, status });
    if (isTerminal(status)) {
      if (stopRequested === 'cancel') throw opts.signal?.reason ?? new Error('exec cancelled');
      return stopRequested === 'timeout' && status.state === 'killed' ? { ...status, state: 'timed_out' } : status;
    }
    if (!stopRequested && opts.signal?.aborted) {
      stopRequested = 'cancel';
      await backend.stop(
        handle,
        `dreact: cancelled (${String((opts.signal.reason as Error | undefined)?.message ?? opts.signal.reason ?? 'abort')})`,
      );
      stopDeadline = Date.now() + (opts.stopWaitMs ?? 60_000);
    } else if (!stopRequested && opts.deadlineMs !== undefined && Date.now() >= opts.deadlineMs) {
      stopRequested = 'timeout';
      await backend.stop(handle, STOP_REASON_TIMEOUT);
      stopDeadline = Date.now() + (opts.stopWaitMs ?? 60_000);
    }
    if (Date.now() > stopDeadline)
      throw new Error(`exec ${handle.execId} did not stop within ${opts.stopWaitMs ?? 60_000} ms of the stop request`);
    const untilDeadline =
      opts.deadlineMs !== undefined && !stopRequested ? Math.max(0, opts.deadlineMs - Date.now()) : Infinity;
    await sleep(Math.min(wait, untilDeadline), stopRequested ? undefined : opts.signal);
    wait = Math.min(maxWait, Math.ceil(wait * 1.5));
  }
}
