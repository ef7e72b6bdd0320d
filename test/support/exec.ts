/** Helpers for exec tests: the backends available here, and running one program to its end. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, chmodSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecBackend, ExecCollected, ExecHandle, ExecLimits, ExecSpec } from '../../activities/exec/backend';
import { LocalBackend } from '../../activities/exec/local';
import { DEFAULT_EXEC_IMAGE, DockerBackend } from '../../activities/exec/docker';
import { DEFAULT_EXEC_LIMITS } from '../../activities/exec/sandbox-files';
import { WasmBackend } from '../../activities/exec/wasm/backend';
import { countSkipped, needs } from './requirements';

/** A scratch root readable by the sandbox user (0711), with a state dir for the backends. */
export function execScratch(prefix: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  chmodSync(root, 0o711);
  return root;
}

/**
 * Why the docker backend cannot be tested here (no engine answers), or undefined. A missing
 * executor image is built (scripts/build-exec-image.sh) rather than skipped.
 */
export function dockerUnavailable(image = process.env.DREACT_EXEC_IMAGE ?? DEFAULT_EXEC_IMAGE): string | undefined {
  try {
    execFileSync('docker', ['version', '--format', '{{.Server.Version}}'], { stdio: 'pipe', timeout: 10_000 });
  } catch (err) {
    return `no docker engine: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`;
  }
  try {
    execFileSync('docker', ['image', 'inspect', image], { stdio: 'pipe', timeout: 10_000 });
  } catch {
    execFileSync(path.join(__dirname, '..', '..', 'scripts', 'build-exec-image.sh'), [image], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 600_000,
    });
  }
  return undefined;
}

/** Needs of the exec tests (test/support/requirements.ts): the local sandbox, a docker engine. */
export const LOCAL_SANDBOX = {
  group: 'exec sandbox tests (local backend, bubblewrap)',
  requirement: 'bubblewrap',
} as const;
export const dockerNeed = (why: string | undefined) =>
  ({ group: 'exec docker backend tests', requirement: 'docker', why }) as const;

/**
 * The backends to test: local unless bubblewrap is missing (required under CI), docker unless no
 * engine can be reached, and wasm (Pyodide from node_modules: always). Each skipped suite is
 * counted in npm test's summary.
 */
export function testBackends(stateRoot: string): Array<{ backend: ExecBackend; skip?: string }> {
  const why = dockerUnavailable();
  if (why) process.stderr.write(`exec tests: docker backend skipped: ${why}\n`);
  const localSkip = countSkipped(LOCAL_SANDBOX, needs(LOCAL_SANDBOX));
  const dockerSkip = countSkipped(dockerNeed(why), needs(dockerNeed(why)));
  return [
    { backend: new LocalBackend({ stateRoot }), ...(localSkip ? { skip: localSkip } : {}) },
    { backend: new DockerBackend({ stateRoot }), ...(dockerSkip ? { skip: dockerSkip } : {}) },
    { backend: new WasmBackend({ stateRoot }) },
  ];
}

let n = 0;
export function makeSpec(root: string, code: string, limits: Partial<ExecLimits> = {}, id?: string): ExecSpec {
  const execId = id ?? `ex-t${process.pid}-${++n}-${Date.now().toString(36)}`;
  const base = path.join(root, 'conv-a', execId);
  return {
    execId,
    conversationId: 'conv-a',
    turnId: 'turn_1',
    language: 'python',
    code,
    workDir: path.join(base, 'work'),
    outputDir: path.join(base, 'out'),
    logDir: path.join(base, 'logs'),
    limits: {
      ...DEFAULT_EXEC_LIMITS,
      wallTimeMs: 20_000,
      memoryBytes: 512 * 1024 * 1024,
      maxFileBytes: 2 * 1024 * 1024,
      maxLogBytes: 16 * 1024,
      ...limits,
    },
  };
}

export async function waitEnd(backend: ExecBackend, handle: ExecHandle, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await backend.status(handle);
    if (s.state !== 'starting' && s.state !== 'running') return;
    if (Date.now() > until) throw new Error(`exec ${handle.execId} still ${s.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts, waits for the end, collects. */
export async function runToEnd(backend: ExecBackend, spec: ExecSpec): Promise<ExecCollected> {
  const handle = await backend.start(spec);
  await waitEnd(backend, handle);
  return backend.collect(handle, spec);
}

/** Host processes whose command line contains `marker` (evidence that a sandbox left nothing running). */
export function hostProcessesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) out.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** A new instance of `backend`'s kind over the same state (a restarted worker's). */
export function freshBackend(backend: ExecBackend, stateRoot: string): ExecBackend {
  if (backend.name === 'docker') return new DockerBackend({ stateRoot });
  if (backend.name === 'wasm') return new WasmBackend({ stateRoot });
  return new LocalBackend({ stateRoot });
}

/**
 * Waits until an exec's program printed `line` (the wasm backend has no host process to look for)
 * or, on the other backends, until a host process with `marker` in its command line runs.
 */
export async function waitProgram(
  backend: ExecBackend,
  handle: ExecHandle,
  marker: string,
  line: string,
): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (backend.name === 'wasm') {
      try {
        if (readFileSync(path.join(handle.ref, 'user.log'), 'utf8').includes(line)) return;
      } catch {
        // no log yet
      }
    } else if (hostProcessesWith(marker).length > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`exec ${handle.execId}: the program never started`);
}

/** The wasm backend's sandbox process of an exec is gone (its pid file names it). */
export function wasmSandboxGone(handle: ExecHandle): boolean {
  const pid = Number(readFileSync(path.join(handle.ref, 'pid'), 'utf8'));
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}
