/**
 * Maps an ECS task, as DescribeTasks returns it, onto the exec state machine (pure).
 *
 * ECS task life cycle: PROVISIONING → PENDING → ACTIVATING → RUNNING → DEACTIVATING → STOPPING →
 * DEPROVISIONING → STOPPED. Only STOPPED is terminal; how it stopped comes from `stopCode`, the
 * task's `stoppedReason` and the executor container's `exitCode` / `reason`.
 */
import type { ExecStatus } from './status';

/** The fields of an ECS Task this mapping reads (dates as epoch ms). */
export interface EcsTaskView {
  lastStatus?: string;
  desiredStatus?: string;
  stopCode?: string;
  stoppedReason?: string;
  createdAtMs?: number;
  pullStartedAtMs?: number;
  startedAtMs?: number;
  stoppedAtMs?: number;
  container?: { exitCode?: number; reason?: string; lastStatus?: string };
}

/** StopTask reasons the runtime itself sends; the prefix tells a timeout from a steer or reaper stop. */
export const STOP_REASON_TIMEOUT = 'dreact: wall time exceeded';
/** The entrypoint exits with this code when it kills the program at its wall-time limit (as `timeout(1)`). */
export const ENTRYPOINT_TIMEOUT_EXIT = 124;

const STARTING = new Set(['PROVISIONING', 'PENDING', 'ACTIVATING']);
const RUNNING = new Set(['RUNNING', 'DEACTIVATING', 'STOPPING', 'DEPROVISIONING']);
/** stopCodes for tasks ECS or AWS stopped (not the program, not us). */
const INFRA_STOP_CODES = new Set(['SpotInterruption', 'ServiceSchedulerInitiated', 'TerminationNotice']);

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function joinReasons(...parts: Array<string | undefined>): string | undefined {
  const kept = parts.filter((p): p is string => !!p && p.trim() !== '');
  return kept.length ? [...new Set(kept)].join('; ') : undefined;
}

export function execStatusOfTask(task: EcsTaskView): ExecStatus {
  const times = { startedAt: iso(task.startedAtMs), endedAt: iso(task.stoppedAtMs) };
  const last = task.lastStatus ?? '';
  if (STARTING.has(last)) return { state: 'starting', startedAt: undefined };
  if (RUNNING.has(last))
    return {
      state: 'running',
      startedAt: times.startedAt,
      reason: task.desiredStatus === 'STOPPED' ? joinReasons(task.stoppedReason) : undefined,
    };
  if (last !== 'STOPPED') throw new Error(`unknown ECS task lastStatus ${JSON.stringify(task.lastStatus)}`);

  const c = task.container ?? {};
  const reason = joinReasons(task.stoppedReason, c.reason);
  const base = { ...times, reason };
  if (task.stopCode === 'TaskFailedToStart') return { state: 'failed_to_start', ...base };
  // Stopped by us (steer, timeout, reaper) — also before the container started.
  if (task.stopCode === 'UserInitiated') {
    const timedOut = (task.stoppedReason ?? '').startsWith(STOP_REASON_TIMEOUT);
    return { state: timedOut ? 'timed_out' : 'killed', exitCode: c.exitCode, ...base };
  }
  if (task.startedAtMs === undefined && c.exitCode === undefined) return { state: 'failed_to_start', ...base };
  if (task.stopCode !== undefined && INFRA_STOP_CODES.has(task.stopCode))
    return { state: 'killed', exitCode: c.exitCode, ...base };
  if (/OutOfMemory/i.test(c.reason ?? '')) return { state: 'killed', exitCode: c.exitCode, ...base };
  if (c.exitCode === undefined) return { state: 'killed', ...base };
  if (c.exitCode === ENTRYPOINT_TIMEOUT_EXIT)
    return {
      state: 'timed_out',
      exitCode: c.exitCode,
      ...base,
      reason: joinReasons('the program exceeded its wall-time limit', c.reason),
    };
  return { state: 'exited', exitCode: c.exitCode, ...times, reason: c.exitCode === 0 ? undefined : reason };
}

export function isTerminal(status: ExecStatus): boolean {
  return status.state !== 'starting' && status.state !== 'running';
}
