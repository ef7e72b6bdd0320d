/**
 * The wasm backend: Python (Pyodide, CPython compiled to WebAssembly) in a sandbox process of its
 * own per call (pool.ts, runner.mjs) — code execution on any machine with Node, no bubblewrap or
 * Docker needed. The workspace is copied into the interpreter's virtual file system at the paths
 * the other backends mount (/workspace/work, OUTPUT_DIR=/workspace/out, LOG_DIR, /runtime with the
 * program and `dreact_tools`), the environment is theirs (sandboxEnv), and OUTPUT_DIR comes back
 * into the exec's output directory, collected under the same caps.
 *
 * Limits: wall time (the process is killed, status timed_out), memory (wasm memory growth and the
 * virtual file system capped at memoryBytes, per-file writes and the log at maxFileBytes), one
 * thread (no fork, threads or subprocesses exist in Pyodide), no network (see runner.mjs).
 *
 * State per exec under `<stateRoot>/<execId>/` (`mkdir` is the launch lock, as for the local
 * backend): owner (the worker's pid), pid (the sandbox process), started, user.log, dropped.json,
 * stopped, exit. The sandbox
 * process is the worker's child and ends with it: a new worker finds the exec and reports it killed
 * (it never runs twice).
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ExecBackend, ExecCollected, ExecHandle, ExecSpec } from '../backend';
import type { ExecStatus } from '../../../core/exec/status';
import { listOutputs, MOUNT, readTail, sandboxEnv } from '../sandbox-files';
import { claimDir, exists, readText, writeOnce } from '../state-dir';
import { projectFile } from '../../../store/project-files';
import { bridgeTools } from './bridge';
import { WasmPool } from './pool';

const HELPER = projectFile('activities', 'exec', 'wasm', 'dreact_tools.py');
/** Exit code recorded when the wall time ran out (as `timeout` reports it for the local backend). */
const TIMEOUT_EXIT = 124;
const KILLED_EXIT = 137;

export interface WasmBackendOptions {
  /** Per-exec state dirs (default DREACT_EXEC_STATE_DIR or <tmp>/dreact-exec-state). */
  stateRoot?: string;
  /** Where the interpreter snapshot is cached (default <stateRoot>/wasm). */
  cacheDir?: string;
  /** Sandbox processes kept warm (default DREACT_EXEC_WASM_WARM or 1). */
  warm?: number;
}

interface Running {
  /** Set once the sandbox process got its job. */
  child?: ChildProcess;
  done?: Promise<void>;
}

/** Sandboxes running in this process, by exec id (a retried activity re-attaches to them). */
const running = new Map<string, Running>();

export class WasmBackend implements ExecBackend {
  readonly name = 'wasm';
  private readonly stateRoot: string;
  readonly pool: WasmPool;

  constructor(opts: WasmBackendOptions = {}) {
    this.stateRoot = opts.stateRoot ?? process.env.DREACT_EXEC_STATE_DIR ?? path.join(os.tmpdir(), 'dreact-exec-state');
    const warm = opts.warm ?? Number(process.env.DREACT_EXEC_WASM_WARM ?? 1);
    this.pool = new WasmPool({ cacheDir: opts.cacheDir ?? path.join(this.stateRoot, 'wasm'), size: warm });
  }

  /** Makes the snapshot and warms the pool now (the worker's start), so the first call does not wait. */
  async warmUp(): Promise<void> {
    this.pool.fill();
    await this.pool.snapshotFile();
  }

  private dirOf(execId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(execId)) throw new Error(`wasm exec: invalid exec id ${JSON.stringify(execId)}`);
    return path.join(this.stateRoot, execId);
  }

  private handleOf(execId: string): ExecHandle {
    return { backend: this.name, execId, ref: this.dirOf(execId) };
  }

  async find(spec: ExecSpec): Promise<ExecHandle | undefined> {
    return (await exists(this.dirOf(spec.execId))) ? this.handleOf(spec.execId) : undefined;
  }

  async start(spec: ExecSpec): Promise<ExecHandle> {
    const dir = this.dirOf(spec.execId);
    await fs.mkdir(this.stateRoot, { recursive: true, mode: 0o711 });
    if (!(await claimDir(dir))) return this.handleOf(spec.execId);
    await fs.writeFile(path.join(dir, 'owner'), String(process.pid));
    const entry: Running = {};
    running.set(spec.execId, entry); // starting: a retried attempt re-attaches, a stop is seen below
    const sandbox = this.pool.take();
    try {
      const [files, helper] = await Promise.all([workspaceFiles(spec), fs.readFile(HELPER)]);
      await sandbox.ready;
      if (await exists(path.join(dir, 'stopped'))) {
        sandbox.child.kill('SIGKILL');
        await writeOnce(path.join(dir, 'exit'), String(KILLED_EXIT));
      } else this.run(spec, dir, sandbox.child, entry, { files, helper });
    } catch (err) {
      await writeOnce(path.join(dir, 'stopped'), `failed to start: ${(err as Error).message}`);
      await writeOnce(path.join(dir, 'exit'), '1');
      throw err;
    }
    return this.handleOf(spec.execId);
  }

  private run(
    spec: ExecSpec,
    dir: string,
    child: ChildProcess,
    entry: Running,
    input: { files: WorkspaceFile[]; helper: Buffer },
  ): void {
    const log = createWriteStream(path.join(dir, 'user.log'));
    let logged = 0;
    log.on('error', () => (logged = Infinity)); // a full disk loses the log, never the worker
    const cap = spec.limits.maxFileBytes + 64 * 1024; // the runner stops the program at maxFileBytes
    const toLog = (d: Buffer) => {
      if (logged < cap) log.write(d.subarray(0, cap - logged));
      logged += d.length;
    };
    child.stdout?.on('data', toLog);
    child.stderr?.on('data', toLog);
    bridgeTools(child.stdio[3] as Duplex, spec.supervisorSocket);
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      Math.max(1, spec.limits.wallTimeMs),
    );
    timer.unref();
    let result: { exitCode: number; files: WorkspaceFile[]; dropped: ExecCollected['dropped'] } | undefined;
    let stored = Promise.resolve();
    child.once('message', (m: typeof result & { type: string }) => {
      if (m.type !== 'result') return;
      result = m;
      stored = storeOutputs(spec.outputDir, dir, m.files, m.dropped);
    });
    const done = new Promise<void>((resolve) => {
      // 'close', not 'exit': the log's last bytes may arrive after the process ended.
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        void (async () => {
          await new Promise<void>((r) => log.end(r));
          await stored.catch(async (err: Error) => {
            await fs.appendFile(path.join(dir, 'user.log'), `wasm sandbox: storing outputs failed: ${err.message}\n`);
          });
          const exit = timedOut ? TIMEOUT_EXIT : (result?.exitCode ?? (signal ? KILLED_EXIT : (code ?? 1)));
          await writeOnce(path.join(dir, 'exit'), String(exit));
          resolve();
        })();
      });
    });
    entry.child = child;
    entry.done = done;
    child.send({
      code: spec.code,
      helper: input.helper,
      env: sandboxEnv(spec),
      limits: spec.limits,
      files: input.files,
    });
    void fs
      .writeFile(path.join(dir, 'pid'), String(child.pid))
      .then(() => fs.writeFile(path.join(dir, 'started'), new Date().toISOString()));
  }

  async status(handle: ExecHandle): Promise<ExecStatus> {
    const dir = handle.ref;
    const [exit, stopped, started] = await Promise.all(
      ['exit', 'stopped', 'started'].map((f) => readText(path.join(dir, f))),
    );
    const startedAt = started?.trim();
    if (exit !== undefined) {
      const exitCode = Number(exit.trim());
      const endedAt = (await fs.stat(path.join(dir, 'exit'))).mtime.toISOString();
      const at = { exitCode, ...(startedAt ? { startedAt } : {}), endedAt };
      if (stopped !== undefined) return { state: 'killed', reason: stopped.trim(), ...at };
      if (exitCode === TIMEOUT_EXIT)
        return { state: 'timed_out', reason: 'the program exceeded its wall-time limit and was killed', ...at };
      return { state: 'exited', ...at };
    }
    if (running.has(handle.execId))
      return { state: startedAt ? 'running' : 'starting', ...(startedAt ? { startedAt } : {}) };
    const owner = Number((await readText(path.join(dir, 'owner')))?.trim());
    if (owner && owner !== process.pid && processAlive(owner)) return { state: 'running' };
    if (!owner && Date.now() - (await fs.stat(dir)).mtimeMs < 15_000) return { state: 'starting' };
    return {
      state: 'killed',
      reason: stopped?.trim() ?? 'the worker process that ran the wasm sandbox ended before the program did',
      ...(startedAt ? { startedAt } : {}),
    };
  }

  async stop(handle: ExecHandle, reason: string): Promise<void> {
    const dir = handle.ref;
    if (!(await exists(dir)) || (await exists(path.join(dir, 'exit')))) return;
    await writeOnce(path.join(dir, 'stopped'), reason);
    const r = running.get(handle.execId);
    if (!r?.child) return; // not started, or still starting: start() sees the stop
    r.child.kill('SIGKILL');
    await r.done;
  }

  async collect(handle: ExecHandle, spec: ExecSpec): Promise<ExecCollected> {
    const status = await this.status(handle);
    if (status.state === 'running' || status.state === 'starting')
      throw new Error(`wasm exec ${handle.execId}: collect while ${status.state}`);
    running.delete(handle.execId);
    const logTail = await readTail(path.join(handle.ref, 'user.log'), spec.limits.maxLogBytes);
    const outputs = await listOutputs(spec.outputDir, spec.limits);
    const inSandbox = JSON.parse(
      (await readText(path.join(handle.ref, 'dropped.json'))) ?? '[]',
    ) as ExecCollected['dropped'];
    const dropped = [...outputs.dropped, ...inSandbox].sort((a, b) => a.path.localeCompare(b.path));
    const infraErrors = /^failed to start: /.test(status.reason ?? '') ? [status.reason!] : [];
    const wallMs =
      status.startedAt && status.endedAt ? Date.parse(status.endedAt) - Date.parse(status.startedAt) : undefined;
    return {
      status,
      logTail,
      outputFiles: outputs.outputFiles,
      dropped,
      infraErrors,
      ...(wallMs !== undefined ? { usage: { wallMs } } : {}),
    };
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface WorkspaceFile {
  /** Path in the sandbox's file system (absolute). */
  path: string;
  bytes: Uint8Array;
  readOnly?: boolean;
}

/** The work and output directories' regular files, at their sandbox paths (symlinks are not followed). */
async function workspaceFiles(spec: ExecSpec): Promise<WorkspaceFile[]> {
  const out: WorkspaceFile[] = [];
  const walk = async (dir: string, at: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full, `${at}/${e.name}`);
      else if (e.isFile()) {
        const st = await fs.stat(full);
        out.push({ path: `${at}/${e.name}`, bytes: await fs.readFile(full), readOnly: (st.mode & 0o222) === 0 });
      }
    }
  };
  await walk(spec.workDir, MOUNT.work);
  await walk(spec.outputDir, MOUNT.out);
  return out;
}

/** Writes the program's OUTPUT_DIR files into the exec's output directory; keeps what the sandbox dropped. */
async function storeOutputs(
  outputDir: string,
  stateDir: string,
  files: WorkspaceFile[],
  dropped: ExecCollected['dropped'],
): Promise<void> {
  await fs.mkdir(outputDir, { recursive: true });
  for (const f of files) {
    const rel = path.normalize(f.path);
    if (rel.startsWith('..') || path.isAbsolute(rel)) continue; // never outside OUTPUT_DIR
    const target = path.join(outputDir, rel);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, f.bytes, { flag: 'w' });
  }
  await fs.writeFile(path.join(stateDir, 'dropped.json'), JSON.stringify(dropped));
}
