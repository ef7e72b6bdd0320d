/**
 * Local backend: bubblewrap. The program runs in fresh namespaces (`--unshare-all`: no network but
 * an empty loopback, own PID/IPC/UTS/user/cgroup namespaces), as nobody, on a read-only root that
 * holds only /usr (and the /bin, /lib* links), /proc, /dev, a tmpfs /tmp and the four mounts
 * (work, outputs, logs, runtime with the supervisor socket). Limits: prlimit (address space,
 * processes, file size, CPU seconds, open files) and a wall-time kill.
 *
 * Detached and re-findable: a tiny shell wrapper, started in its own session, records its pid and
 * the exit code under `<stateRoot>/<execId>/`; the sandbox outlives a worker crash and a new
 * backend instance re-attaches by exec id. `mkdir` of that directory is the launch lock, so one
 * exec id never starts twice. `stop` kills every process of the wrapper's session.
 */
import { spawn } from 'node:child_process';
import { promises as fs, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { ExecBackend, ExecCollected, ExecHandle, ExecSpec } from './backend';
import type { ExecStatus } from '../../core/exec/status';
import { claimDir, exists, readText, writeOnce } from './state-dir';
import {
  listOutputs,
  MOUNT,
  PROGRAM_FILE,
  prepareSandboxFiles,
  readTail,
  runtimeDirOf,
  SANDBOX_UID,
  sandboxEnv,
} from './sandbox-files';

/** Seconds a launched exec may go without a pid file before it counts as failed to start. */
const START_GRACE_MS = 15_000;
/** Exit status of `timeout` when the wall time ran out. */
const TIMEOUT_EXIT = 124;

const WRAPPER = `#!/bin/sh
# dreact exec wrapper: $1 state dir, $2 wall seconds, then the sandbox command.
d="$1"; w="$2"; shift 2
echo "$$ $(cut -d' ' -f22 /proc/$$/stat)" > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"
timeout -k 2 "$w" "$@" > "$d/user.log" 2>&1 < /dev/null
rc=$?
echo "$rc" > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
`;

export interface LocalBackendOptions {
  /** Host directory of the per-exec state dirs (pid, exit code, log). */
  stateRoot?: string;
  /** Run without bubblewrap (NOT isolated). Default: DREACT_EXEC_UNSAFE_LOCAL=1. */
  unsafe?: boolean;
  bwrapPath?: string;
}

export function defaultStateRoot(): string {
  return process.env.DREACT_EXEC_STATE_DIR ?? path.join(os.tmpdir(), 'dreact-exec-state');
}

export class LocalBackend implements ExecBackend {
  readonly name = 'local';
  private readonly stateRoot: string;
  private readonly unsafe: boolean;
  private readonly bwrapPath: string;

  constructor(opts: LocalBackendOptions = {}) {
    this.stateRoot = opts.stateRoot ?? defaultStateRoot();
    this.unsafe = opts.unsafe ?? process.env.DREACT_EXEC_UNSAFE_LOCAL === '1';
    this.bwrapPath = opts.bwrapPath ?? '/usr/bin/bwrap';
  }

  private dirOf(execId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(execId)) throw new Error(`local exec: invalid exec id ${JSON.stringify(execId)}`);
    return path.join(this.stateRoot, execId);
  }

  private handleOf(execId: string): ExecHandle {
    return { backend: this.name, execId, ref: this.dirOf(execId) };
  }

  async find(spec: ExecSpec): Promise<ExecHandle | undefined> {
    const dir = this.dirOf(spec.execId);
    return (await exists(dir)) ? this.handleOf(spec.execId) : undefined;
  }

  async start(spec: ExecSpec): Promise<ExecHandle> {
    const isolated = await exists(this.bwrapPath);
    if (!isolated && !this.unsafe) {
      throw ApplicationFailure.create({
        type: 'ExecRefused',
        nonRetryable: true,
        message: `local exec refused: bubblewrap (${this.bwrapPath}) is not installed, and code never runs unsandboxed unless DREACT_EXEC_UNSAFE_LOCAL=1. Install the Debian package "bubblewrap", or choose DREACT_EXEC_BACKEND=docker.`,
      });
    }
    const dir = this.dirOf(spec.execId);
    await fs.mkdir(this.stateRoot, { recursive: true, mode: 0o711 });
    if (!(await claimDir(dir))) return this.handleOf(spec.execId); // the launch lock: one caller creates it
    const runtimeDir = runtimeDirOf(spec, path.join(dir, 'runtime'));
    await prepareSandboxFiles(spec, runtimeDir);
    await fs.writeFile(path.join(dir, 'wrapper.sh'), WRAPPER, { mode: 0o700 });
    const command = isolated ? this.bwrapCommand(spec, runtimeDir) : this.unsafeCommand(spec, runtimeDir);
    const wallSeconds = (Math.max(1, spec.limits.wallTimeMs) / 1000).toFixed(3);
    const child = spawn('/bin/sh', [path.join(dir, 'wrapper.sh'), dir, wallSeconds, ...command], {
      detached: true, // own session: survives the worker, killed as a whole by stop()
      stdio: 'ignore',
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, // nothing of the worker's environment
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.unref();
    return this.handleOf(spec.execId);
  }

  /** prlimit limits, then (as root) the drop to nobody, then bubblewrap. */
  private limitPrefix(spec: ExecSpec): string[] {
    const l = spec.limits;
    const cpuSeconds = Math.max(1, Math.ceil((l.wallTimeMs / 1000) * Math.max(l.cpus, 0.1)) + 1);
    const drop =
      process.getuid?.() === 0
        ? ['setpriv', `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--']
        : [];
    return [
      ...drop,
      'prlimit',
      `--as=${l.memoryBytes}`,
      `--nproc=${l.maxProcesses}`,
      `--fsize=${l.maxFileBytes}`,
      `--cpu=${cpuSeconds}`,
      '--nofile=256',
      '--core=0',
      '--',
    ];
  }

  private bwrapCommand(spec: ExecSpec, runtimeDir: string): string[] {
    const sys: string[] = [];
    for (const top of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) sys.push(...systemEntry(top));
    const env = Object.entries(sandboxEnv(spec)).flatMap(([k, v]) => ['--setenv', k, v]);
    return [
      ...this.limitPrefix(spec),
      this.bwrapPath,
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--as-pid-1', // the program is PID 1: nothing else inside to signal or ptrace; its end ends the namespace
      '--uid',
      String(SANDBOX_UID),
      '--gid',
      String(SANDBOX_UID),
      '--hostname',
      'sandbox',
      '--cap-drop',
      'ALL',
      '--ro-bind',
      '/usr',
      '/usr',
      ...sys,
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--dir',
      '/workspace',
      '--bind',
      spec.workDir,
      MOUNT.work,
      '--bind',
      spec.outputDir,
      MOUNT.out,
      '--bind',
      spec.logDir,
      MOUNT.logs,
      '--ro-bind',
      runtimeDir,
      MOUNT.runtime,
      '--remount-ro',
      '/',
      '--chdir',
      MOUNT.work,
      '--clearenv',
      ...env,
      '--',
      '/usr/bin/python3',
      `${MOUNT.runtime}/${PROGRAM_FILE}`,
    ];
  }

  /** DREACT_EXEC_UNSAFE_LOCAL=1 without bubblewrap: limits and a clean environment, NO isolation. */
  private unsafeCommand(spec: ExecSpec, runtimeDir: string): string[] {
    const env: Record<string, string> = {
      ...sandboxEnv(spec),
      OUTPUT_DIR: spec.outputDir,
      LOG_DIR: spec.logDir,
      PYTHONPATH: runtimeDir,
    };
    if (spec.supervisorSocket) env.DREACT_SUPERVISOR_SOCKET = spec.supervisorSocket;
    return [
      ...this.limitPrefix(spec),
      'env',
      '-i',
      `--chdir=${spec.workDir}`,
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      '/usr/bin/python3',
      path.join(runtimeDir, PROGRAM_FILE),
    ];
  }

  async status(handle: ExecHandle): Promise<ExecStatus> {
    const dir = handle.ref;
    const started = await readPid(dir);
    const exit = await readText(path.join(dir, 'exit'));
    const stopped = await readText(path.join(dir, 'stopped'));
    const startedAt = started?.at;
    if (exit !== undefined) {
      const code = Number(exit.trim());
      const endedAt = (await fs.stat(path.join(dir, 'exit'))).mtime.toISOString();
      if (stopped !== undefined) return { state: 'killed', exitCode: code, reason: stopped.trim(), startedAt, endedAt };
      if (code === TIMEOUT_EXIT)
        return {
          state: 'timed_out',
          exitCode: code,
          reason: 'the program exceeded its wall-time limit and was killed',
          startedAt,
          endedAt,
        };
      return { state: 'exited', exitCode: code, startedAt, endedAt };
    }
    if (!started) {
      const age = Date.now() - (await fs.stat(dir)).mtimeMs;
      if (stopped !== undefined) return { state: 'killed', reason: stopped.trim() };
      return age < START_GRACE_MS
        ? { state: 'starting' }
        : { state: 'failed_to_start', reason: 'the sandbox wrapper never started' };
    }
    if (await alive(started.pid, started.ticks)) return { state: 'running', startedAt };
    return {
      state: 'killed',
      reason: stopped?.trim() ?? 'the sandbox ended without an exit code (killed outside the runtime)',
      startedAt,
    };
  }

  async stop(handle: ExecHandle, reason: string): Promise<void> {
    const dir = handle.ref;
    if (!(await exists(dir)) || (await exists(path.join(dir, 'exit')))) return;
    await writeOnce(path.join(dir, 'stopped'), reason);
    const started = await readPid(dir);
    if (!started || !(await alive(started.pid, started.ticks))) return;
    for (let i = 0; i < 50; i++) {
      const members = await sessionMembers(started.pid);
      if (members.length === 0) return;
      for (const pid of members) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`local exec ${handle.execId}: processes of session ${started.pid} survived SIGKILL`);
  }

  async collect(handle: ExecHandle, spec: ExecSpec): Promise<ExecCollected> {
    const status = await this.status(handle);
    if (status.state === 'running' || status.state === 'starting')
      throw new Error(`local exec ${handle.execId}: collect while ${status.state}`);
    const infraErrors: string[] = [];
    if (status.state === 'failed_to_start') infraErrors.push(status.reason ?? 'failed to start');
    const logTail = await readTail(path.join(handle.ref, 'user.log'), spec.limits.maxLogBytes);
    if (status.state === 'exited' && status.exitCode === 1 && /^bwrap: /m.test(logTail))
      infraErrors.push(`bubblewrap: ${/^bwrap: (.*)$/m.exec(logTail)![1]}`);
    const outputs = await listOutputs(spec.outputDir, spec.limits);
    const wallMs =
      status.startedAt && status.endedAt ? Date.parse(status.endedAt) - Date.parse(status.startedAt) : undefined;
    return { status, logTail, ...outputs, infraErrors, ...(wallMs !== undefined ? { usage: { wallMs } } : {}) };
  }
}

/** `/bin`, `/lib*`: recreated as the host has them (merged-/usr links, or read-only binds). */
function systemEntry(top: string): string[] {
  const host = `/${top}`;
  try {
    const target = readlinkSync(host);
    return ['--symlink', target, host];
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    if (code === 'EINVAL') return ['--ro-bind', host, host]; // a real directory
    throw err;
  }
}

async function readPid(dir: string): Promise<{ pid: number; ticks: string; at: string } | undefined> {
  const p = path.join(dir, 'pid');
  const text = await readText(p);
  if (text === undefined) return undefined;
  const [pid, ticks] = text.trim().split(/\s+/);
  if (!pid || !/^\d+$/.test(pid)) throw new Error(`local exec: corrupt pid file ${p}: ${JSON.stringify(text)}`);
  return { pid: Number(pid), ticks: ticks ?? '', at: (await fs.stat(p)).mtime.toISOString() };
}

/** Fields of /proc/<pid>/stat after the command name. */
async function statFields(pid: number): Promise<string[] | undefined> {
  const text = await readText(`/proc/${pid}/stat`).catch(() => undefined);
  if (!text) return undefined;
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** The wrapper still runs (same pid AND same start time: a reused pid does not count). */
async function alive(pid: number, ticks: string): Promise<boolean> {
  const f = await statFields(pid);
  return f !== undefined && f[19] === ticks && f[0] !== 'Z';
}

/** Every process whose session is the wrapper's (the wrapper, timeout, bwrap). */
async function sessionMembers(sid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = await statFields(Number(name));
    if (f && Number(f[3]) === sid && f[0] !== 'Z') out.push(Number(name));
  }
  return out;
}

/** Processes of an exec's session (tests check that none survive). */
export { sessionMembers };
