/**
 * The seam between the exec activities and the sandbox that runs generated code.
 * One interface, three implementations (local bubblewrap, Docker, AWS Fargate), chosen by
 * DREACT_EXEC_BACKEND. Every method is idempotent on `execId`: a retried activity attempt calls
 * `find` first and re-attaches to an exec that is already started or finished, so one exec id
 * never runs twice.
 */
import type { ExecStatus } from '../../core/exec/status';

/** Resource limits of one exec; every backend enforces all of them. */
export interface ExecLimits {
  /** Wall-clock limit of the user program, ms. */
  wallTimeMs: number;
  /** Address-space / memory limit, bytes. */
  memoryBytes: number;
  /** CPU quota in cores (1 = one full core). */
  cpus: number;
  /** Maximum number of processes/threads inside the sandbox. */
  maxProcesses: number;
  /** Largest file the program may write, bytes. */
  maxFileBytes: number;
  /** Cap on the number of files collected from the output directory. */
  maxOutputFiles: number;
  /** Cap on the total bytes collected from the output directory. */
  maxOutputBytes: number;
  /** Cap on captured stdout+stderr bytes (the rest is dropped, the tail kept). */
  maxLogBytes: number;
}

/** What to run. Paths are host paths prepared by the launch activity. */
export interface ExecSpec {
  /** Deterministic id: derives from workflow id + round + call index. */
  execId: string;
  conversationId: string;
  turnId: string;
  language: 'python';
  /** Source of the user program (from the round's `<channel:code>`). */
  code: string;
  /** Host directory with the materialised workspace (mounted as the working directory). */
  workDir: string;
  /** Host directory the program writes its outputs to (OUTPUT_DIR inside the sandbox). */
  outputDir: string;
  /** Host directory for the program's log files. */
  logDir: string;
  /** Host path of the supervisor's Unix socket for tool-proxy calls, when enabled. */
  supervisorSocket?: string;
  limits: ExecLimits;
  /** Container image (the docker backend; the agent's `exec.image`), else the backend's own. */
  image?: string;
}

/** Opaque per-backend handle; serialisable, kept in the activity's heartbeat details. */
export interface ExecHandle {
  backend: string;
  execId: string;
  /** Backend-specific reference (pid file, container id, task ARN). */
  ref: string;
}

export interface ExecCollected {
  status: ExecStatus;
  /** Tail of the program's combined stdout/stderr (at most limits.maxLogBytes). */
  logTail: string;
  /** Files the program wrote to the output directory, relative paths, after the caps. */
  outputFiles: Array<{ path: string; sizeBytes: number }>;
  /** Files skipped by the caps or unreadable, with the reason. */
  dropped: Array<{ path: string; reason: string }>;
  /** Problems of the infrastructure itself (not of the user program). */
  infraErrors: string[];
  /** Resource usage for the usage ledger, when the backend can measure it. */
  usage?: { vcpuSeconds?: number; gbSeconds?: number; wallMs?: number; costUsd?: number };
}

export interface ExecBackend {
  readonly name: string;
  /** Starts the exec, or returns the handle of the one already started under this execId. */
  start(spec: ExecSpec, signal?: AbortSignal): Promise<ExecHandle>;
  /** The handle of an exec already started under this id, if any (re-attach after a crash). */
  find(spec: ExecSpec): Promise<ExecHandle | undefined>;
  status(handle: ExecHandle, signal?: AbortSignal): Promise<ExecStatus>;
  /** Kills the sandbox and everything in it; idempotent. */
  stop(handle: ExecHandle, reason: string): Promise<void>;
  /** After a terminal state: logs, outputs (into spec.outputDir) and usage. Releases resources. */
  collect(handle: ExecHandle, spec: ExecSpec): Promise<ExecCollected>;
}
