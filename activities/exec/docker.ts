/**
 * Docker backend through the docker CLI (the engine's own client: no extra dependency, the same
 * commands an operator types, and it follows DOCKER_HOST / contexts; one exec costs a handful of CLI
 * calls, far below the program's own start-up).
 *
 * Containers run with `--network none --read-only --user 65534:65534 --cap-drop ALL
 * --security-opt no-new-privileges`, memory / pids / CPU limits, a tmpfs /tmp and the four bind
 * mounts (work, outputs, logs, runtime with the supervisor socket, read-only). The program is the
 * container's PID 1 (no other process inside it could signal or ptrace; when it ends, everything
 * it started ends); `status` kills a container running past its wall time (a re-attached await
 * enforces it too, from the container's own start time). The container name derives from the exec id, and
 * `<stateRoot>/<execId>` is the launch lock and keeps the final status after the container is
 * removed (collect), so a retried activity re-attaches and never starts a second one.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ExecBackend, ExecCollected, ExecHandle, ExecSpec } from './backend';
import type { ExecStatus } from '../../core/exec/status';
import { defaultStateRoot } from './local';
import {
  listOutputs,
  MOUNT,
  PROGRAM_FILE,
  prepareSandboxFiles,
  runtimeDirOf,
  SANDBOX_UID,
  sandboxEnv,
} from './sandbox-files';
import { claimDir, exists, readText, writeOnce } from './state-dir';

export const DEFAULT_EXEC_IMAGE = 'dreact-exec:local';

export interface DockerBackendOptions {
  image?: string;
  stateRoot?: string;
  dockerPath?: string;
}

interface Inspect {
  State: {
    Status: string;
    ExitCode: number;
    OOMKilled: boolean;
    StartedAt: string;
    FinishedAt: string;
    Error?: string;
  };
}

export function containerName(execId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(execId)) throw new Error(`docker exec: invalid exec id ${JSON.stringify(execId)}`);
  return `dreact-exec-${execId}`;
}

export class DockerBackend implements ExecBackend {
  readonly name = 'docker';
  readonly image: string;
  private readonly stateRoot: string;
  private readonly docker: string;

  constructor(opts: DockerBackendOptions = {}) {
    this.image = opts.image ?? process.env.DREACT_EXEC_IMAGE ?? DEFAULT_EXEC_IMAGE;
    this.stateRoot = opts.stateRoot ?? defaultStateRoot();
    this.docker = opts.dockerPath ?? 'docker';
  }

  /** Runs the docker CLI; rejects with its stderr. */
  cli(
    args: string[],
    opts: { maxBuffer?: number; signal?: AbortSignal } = {},
  ): Promise<{ stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      execFile(
        this.docker,
        args,
        { maxBuffer: opts.maxBuffer ?? 16 * 1024 * 1024, ...(opts.signal ? { signal: opts.signal } : {}) },
        (err, stdout, stderr) => {
          if (err)
            reject(
              Object.assign(new Error(`docker ${args[0]}: ${String(stderr).trim() || err.message}`), {
                stderr: String(stderr),
              }),
            );
          else resolve({ stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  private handleOf(execId: string): ExecHandle {
    return { backend: this.name, execId, ref: containerName(execId) };
  }

  private dirOf(execId: string): string {
    containerName(execId);
    return path.join(this.stateRoot, execId);
  }

  async find(spec: ExecSpec): Promise<ExecHandle | undefined> {
    return (await exists(this.dirOf(spec.execId))) ? this.handleOf(spec.execId) : undefined;
  }

  async start(spec: ExecSpec, signal?: AbortSignal): Promise<ExecHandle> {
    const dir = this.dirOf(spec.execId);
    await fs.mkdir(this.stateRoot, { recursive: true, mode: 0o711 });
    if (!(await claimDir(dir))) return this.handleOf(spec.execId);
    const runtimeDir = runtimeDirOf(spec, path.join(dir, 'runtime'));
    await prepareSandboxFiles(spec, runtimeDir);
    const l = spec.limits;
    await fs.writeFile(path.join(dir, 'wall_ms'), String(l.wallTimeMs));
    const env = Object.entries(sandboxEnv(spec)).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const args = [
      'run',
      '--detach',
      '--name',
      containerName(spec.execId),
      '--label',
      `dreact.exec=${spec.execId}`,
      '--label',
      `dreact.conversation=${spec.conversationId}`,
      '--label',
      `dreact.turn=${spec.turnId}`,
      '--network',
      'none',
      '--read-only',
      '--user',
      `${SANDBOX_UID}:${SANDBOX_UID}`,
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--memory',
      String(l.memoryBytes),
      '--memory-swap',
      String(l.memoryBytes),
      '--pids-limit',
      String(l.maxProcesses),
      '--cpus',
      String(l.cpus),
      '--ulimit',
      `fsize=${l.maxFileBytes}`,
      '--ulimit',
      'nofile=256:256',
      '--ulimit',
      'core=0',
      '--tmpfs',
      '/tmp:rw,nosuid,nodev,size=64m,mode=1777',
      '--log-driver',
      'json-file',
      '--log-opt',
      `max-size=${Math.max(l.maxLogBytes, 16 * 1024)}`,
      '--log-opt',
      'max-file=1',
      '--mount',
      `type=bind,src=${spec.workDir},dst=${MOUNT.work}`,
      '--mount',
      `type=bind,src=${spec.outputDir},dst=${MOUNT.out}`,
      '--mount',
      `type=bind,src=${spec.logDir},dst=${MOUNT.logs}`,
      '--mount',
      `type=bind,src=${runtimeDir},dst=${MOUNT.runtime},readonly`,
      '--workdir',
      MOUNT.work,
      ...env,
      spec.image ?? this.image,
      '/usr/bin/python3',
      `${MOUNT.runtime}/${PROGRAM_FILE}`,
    ];
    try {
      await this.cli(args, signal ? { signal } : {});
    } catch (err) {
      if (/already in use/.test(String((err as Error).message))) return this.handleOf(spec.execId);
      // The lock stays: the exec id failed to start, status reports it, a retry does not relaunch.
      await writeOnce(path.join(dir, 'failed'), (err as Error).message);
    }
    return this.handleOf(spec.execId);
  }

  private async inspect(handle: ExecHandle): Promise<Inspect | undefined> {
    try {
      const { stdout } = await this.cli(['inspect', '--type', 'container', handle.ref]);
      return (JSON.parse(stdout) as Inspect[])[0];
    } catch (err) {
      if (/No such (container|object)/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  async status(handle: ExecHandle): Promise<ExecStatus> {
    const dir = this.dirOf(handle.execId);
    const final = await readText(path.join(dir, 'final.json'));
    if (final !== undefined) return JSON.parse(final) as ExecStatus;
    const failed = await readText(path.join(dir, 'failed'));
    if (failed !== undefined) return { state: 'failed_to_start', reason: failed.trim() };
    const info = await this.inspect(handle);
    const stopped = await readText(path.join(dir, 'stopped'));
    if (!info) return stopped !== undefined ? { state: 'killed', reason: stopped } : { state: 'starting' };
    const s = info.State;
    const startedAt = s.StartedAt.startsWith('0001') ? undefined : s.StartedAt;
    if (s.Status === 'created') return { state: 'starting' };
    if (s.Status === 'running' || s.Status === 'restarting' || s.Status === 'paused') {
      const wall = await readText(path.join(dir, 'wall_ms'));
      if (startedAt && wall && Date.now() - Date.parse(startedAt) > Number(wall)) {
        await this.stop(handle, 'timeout: the container ran past its wall-time limit');
        return this.status(handle);
      }
      return { state: 'running', ...(startedAt ? { startedAt } : {}) };
    }
    const endedAt = s.FinishedAt.startsWith('0001') ? undefined : s.FinishedAt;
    const base = { exitCode: s.ExitCode, ...(startedAt ? { startedAt } : {}), ...(endedAt ? { endedAt } : {}) };
    if (stopped !== undefined)
      return { state: stopped.startsWith('timeout') ? 'timed_out' : 'killed', reason: stopped, ...base };
    if (s.OOMKilled) return { state: 'exited', reason: 'out of memory: the container was OOM-killed', ...base };
    return { state: 'exited', ...base };
  }

  async stop(handle: ExecHandle, reason: string): Promise<void> {
    const dir = this.dirOf(handle.execId);
    if (!(await exists(dir)) || (await exists(path.join(dir, 'final.json')))) return;
    await writeOnce(path.join(dir, 'stopped'), reason);
    try {
      await this.cli(['kill', '--signal', 'KILL', handle.ref]);
    } catch (err) {
      if (!/No such container|is not running/i.test((err as Error).message)) throw err;
    }
  }

  async collect(handle: ExecHandle, spec: ExecSpec): Promise<ExecCollected> {
    const dir = this.dirOf(handle.execId);
    const status = await this.status(handle);
    if (status.state === 'running' || status.state === 'starting')
      throw new Error(`docker exec ${handle.execId}: collect while ${status.state}`);
    const infraErrors: string[] = [];
    if (status.state === 'failed_to_start') infraErrors.push(status.reason ?? 'failed to start');
    let logTail = await readText(path.join(dir, 'log_tail'));
    if (logTail === undefined) {
      const logs = await this.cli(['logs', handle.ref], { maxBuffer: 64 * 1024 * 1024 }).catch((err: Error) => {
        if (!/No such container/i.test(err.message)) infraErrors.push(`docker logs: ${err.message}`);
        return { stdout: '', stderr: '' };
      });
      const combined = Buffer.from(logs.stdout + logs.stderr, 'utf8');
      logTail = combined
        .subarray(Math.max(0, combined.length - spec.limits.maxLogBytes))
        .toString('utf8')
        .replace(/^\uFFFD+/, '');
      await writeOnce(path.join(dir, 'log_tail'), logTail);
    }
    const outputs = await listOutputs(spec.outputDir, spec.limits);
    // Final status first, then remove the container: a retried collect reads the saved state.
    await writeOnce(path.join(dir, 'final.json'), JSON.stringify(status));
    await this.cli(['rm', '--force', '--volumes', handle.ref]).catch((err: Error) => {
      if (!/No such container/i.test(err.message)) throw err;
    });
    const wallMs =
      status.startedAt && status.endedAt ? Date.parse(status.endedAt) - Date.parse(status.startedAt) : undefined;
    return { status, logTail, ...outputs, infraErrors, ...(wallMs !== undefined ? { usage: { wallMs } } : {}) };
  }
}
