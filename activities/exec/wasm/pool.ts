/**
 * The wasm backend's sandbox processes: Pyodide's interpreter is initialised once per worker (a
 * memory snapshot, made by one sandbox process and cached on disk keyed by the Pyodide and Node
 * versions and the runner), and every call gets a process of its own restored from it — a fresh
 * interpreter state per call. `size` processes are kept warm (loaded, waiting for a job), so a call
 * does not wait for the restore; each serves one job and is replaced.
 *
 * Each process runs runner.mjs under Node's permission model: it reads only Pyodide's files, the
 * runner and the snapshot; it writes nothing on the host, starts no process or thread and loads no
 * addon; code generation from strings is off; its environment is empty; its JS heap is capped.
 * Pyodide is loaded from node_modules, never from a CDN.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { projectFile } from '../../../store/project-files';

export const RUNNER_FILE = projectFile('activities', 'exec', 'wasm', 'runner.mjs');
/** JS heap of a sandbox process, MB (the program's memory is wasm memory, capped per exec). */
const HEAP_MB = 256;

/** Pyodide's directory in node_modules (its real path: the permission model checks real paths). */
export function pyodideDir(): string {
  return realpathSync(path.dirname(require.resolve('pyodide/package.json')));
}

export function pyodideVersion(): string {
  return (JSON.parse(readFileSync(path.join(pyodideDir(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Node's permission flag: `--permission` (Node ≥ 22.13), `--experimental-permission` before. */
function permissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
}

export interface SandboxProcess {
  child: ChildProcess;
  /** Resolves when the interpreter is restored and the process waits for its job; ms it took. */
  ready: Promise<number>;
}

function spawnRunner(mode: 'run' | 'snapshot', snapshot: string): ChildProcess {
  const dir = pyodideDir();
  const wsDir = realpathSync(path.dirname(require.resolve('ws/package.json', { paths: [dir] })));
  const read = [`${dir}/*`, `${wsDir}/*`, realpathSync(RUNNER_FILE), snapshot];
  const args = [
    permissionFlag(),
    ...read.map((p) => `--allow-fs-read=${p}`),
    ...(mode === 'snapshot' ? [`--allow-fs-write=${snapshot}`] : []),
    '--disallow-code-generation-from-strings',
    `--max-old-space-size=${HEAP_MB}`,
    '--no-warnings',
    realpathSync(RUNNER_FILE),
    mode,
    dir,
    snapshot,
  ];
  const child = spawn(process.execPath, args, {
    env: {}, // nothing of the worker's environment
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'ipc'],
    serialization: 'advanced', // the workspace's bytes travel as Uint8Arrays
    cwd: dir,
  });
  return child;
}

/** A waiting (warm) sandbox never keeps the worker alive; it exits when the worker's IPC channel closes. */
function setRef(child: ChildProcess, ref: boolean): void {
  const op = ref ? 'ref' : 'unref';
  child[op]();
  child.channel?.[op]();
  for (const s of child.stdio) (s as { ref?: () => void; unref?: () => void } | null)?.[op]?.();
}

/** Everything the child printed to stdout/stderr, for an error message. */
function captureOutput(child: ChildProcess): () => string {
  let out = '';
  const add = (d: Buffer) => (out = (out + d.toString('utf8')).slice(-4000));
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => out.trim();
}

export class WasmPool {
  private snapshot: Promise<string> | undefined;
  private readonly warm: SandboxProcess[] = [];

  constructor(private readonly opts: { cacheDir: string; size: number }) {}

  /** The snapshot file, made once (by a sandbox process) and reused while its key matches. */
  snapshotFile(): Promise<string> {
    this.snapshot ??= this.makeSnapshot().catch((err: unknown) => {
      this.snapshot = undefined; // a later call tries again
      throw err;
    });
    return this.snapshot;
  }

  private async makeSnapshot(): Promise<string> {
    const key = createHash('sha256')
      .update(`${pyodideVersion()}\0${process.version}\0`)
      .update(readFileSync(RUNNER_FILE))
      .digest('hex')
      .slice(0, 16);
    await fs.mkdir(this.opts.cacheDir, { recursive: true, mode: 0o700 });
    const file = path.join(realpathSync(this.opts.cacheDir), `pyodide-${pyodideVersion()}-${key}.snapshot`);
    try {
      if ((await fs.stat(file)).size > 0) return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, '', { mode: 0o600 });
    const child = spawnRunner('snapshot', tmp);
    const output = captureOutput(child);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c) => resolve(c));
    });
    if (code !== 0) {
      await fs.rm(tmp, { force: true });
      throw new Error(`wasm exec: making the Pyodide snapshot failed (exit ${code}): ${output()}`);
    }
    await fs.rename(tmp, file);
    return file;
  }

  /** Starts warming processes up to the pool size (errors surface at the next take). */
  fill(): void {
    while (this.warm.length < this.opts.size) {
      const p = this.start();
      p.ready.then(
        () => this.warm.includes(p) && setRef(p.child, false),
        () => {
          const i = this.warm.indexOf(p);
          if (i >= 0) this.warm.splice(i, 1);
        },
      );
      this.warm.push(p);
    }
  }

  /** A sandbox process for one job: a warm one, or a new one; the pool refills after its job. */
  take(): SandboxProcess {
    const p = this.warm.shift() ?? this.start();
    // The pool refills when this one's job is over: a restore running beside the job would take
    // its CPU (a restore is a second of a core, more on a busy machine).
    void p.ready.then(
      () => {
        setRef(p.child, true);
        p.child.once('exit', () => this.fill());
      },
      () => this.fill(),
    );
    return p;
  }

  private start(): SandboxProcess {
    let child: ChildProcess | undefined;
    const spawned = this.snapshotFile().then((file) => (child = spawnRunner('run', file)));
    const ready = spawned.then(
      (c) =>
        new Promise<number>((resolve, reject) => {
          const output = captureOutput(c);
          const onExit = (code: number | null, signal: string | null) =>
            reject(
              new Error(
                `wasm exec: the sandbox process ended before it was ready (${signal ?? `exit ${code}`}): ${output()}`,
              ),
            );
          c.once('exit', onExit);
          c.once('error', reject);
          c.once('message', (m: { type?: string; loadMs?: number }) => {
            c.off('exit', onExit);
            c.stdout?.removeAllListeners('data');
            c.stderr?.removeAllListeners('data');
            if (m.type === 'ready') resolve(m.loadMs ?? 0);
            else reject(new Error(`wasm exec: unexpected first message from the sandbox: ${JSON.stringify(m)}`));
          });
        }),
    );
    ready.catch(() => undefined);
    return {
      get child() {
        if (!child) throw new Error('wasm exec: the sandbox process is not started yet');
        return child;
      },
      ready,
    };
  }

  /** Resolves when every warm process is ready (benchmarks, tests); ms each took to restore. */
  async whenWarm(): Promise<number[]> {
    return Promise.all(this.warm.map((p) => p.ready));
  }

  /** Kills the warm processes (worker shutdown, tests). */
  close(): void {
    for (const p of this.warm.splice(0)) void p.ready.then(() => p.child.kill('SIGKILL')).catch(() => undefined);
  }
}
