/** The exec state machine every backend reports on (activities/exec/backend.ts). */
export type ExecState = 'starting' | 'running' | 'exited' | 'killed' | 'timed_out' | 'failed_to_start';

export interface ExecStatus {
  state: ExecState;
  exitCode?: number;
  /** Why the backend stopped it (timeout, steer, OOM, ECS stoppedReason…). */
  reason?: string;
  startedAt?: string;
  endedAt?: string;
}
