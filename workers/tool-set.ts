/**
 * The worker's tools beyond the built-ins, built in one place for the standalone worker
 * (workers/main.ts) and the embedded stack (`dreact dev`, `dreact turn`, the demo): exec.python on
 * the sandbox DREACT_EXEC_BACKEND names — `local` (bubblewrap, the default), `docker`, `fargate`,
 * `wasm` (Pyodide in a sandbox process), or `off` (no exec tool).
 *
 * The local backend is probed once at start (activities/exec/bubblewrap.ts). Where bubblewrap is
 * missing or cannot create namespaces, exec.python runs on the wasm backend (the standard library
 * only: the start line says what it cannot do); only when Pyodide is not installed either does
 * exec.python stay listed with each call returning an observation that says what to install —
 * never an unknown-tool notice. One line tells the start log what exec runs on.
 */
import type { ExecBackend } from '../activities/exec/backend';
import {
  BUBBLEWRAP_REMEDY,
  probeBubblewrap,
  unavailableExecTool,
  type BubblewrapProbe,
} from '../activities/exec/bubblewrap';
import { DockerBackend } from '../activities/exec/docker';
import { createExecTool, type ExecToolOptions } from '../activities/exec/exec-tool';
import type { FargateBackend } from '../activities/exec/fargate/backend';
import { LocalBackend } from '../activities/exec/local';
import { probeWasm, wasmStartLine } from '../activities/exec/wasm/about';
import { WasmBackend } from '../activities/exec/wasm/backend';
import type { AnyToolDeclaration } from '../core/tools/registry';
import type { ToolImpl } from '../activities/tools/types';

export const EXEC_BACKENDS = ['local', 'docker', 'fargate', 'wasm', 'off'] as const;
export type ExecBackendName = (typeof EXEC_BACKENDS)[number];

export interface WorkerToolSetOptions {
  /** Where DREACT_EXEC_BACKEND, DREACT_EXEC_UNSAFE_LOCAL and PATH (for bwrap) are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Replaces the bubblewrap probe (tests). */
  probe?: () => Promise<BubblewrapProbe>;
  /** Options of the exec tool (work root, limits, poll interval); the backend comes from the environment. */
  exec?: Omit<ExecToolOptions, 'backend' | 'backends'>;
  /** Receives the one start line that says what exec.python runs on. */
  log?: (line: string) => void;
  /** Wasm backend: make its interpreter snapshot and warm a sandbox now (default true). */
  warm?: boolean;
  /** Replaces the check that Pyodide is installed (tests). */
  wasmProbe?: typeof probeWasm;
}

export interface WorkerToolSet {
  /** For `createWorker({ extraTools })`. */
  extraTools: Array<{ declaration: AnyToolDeclaration; impl: ToolImpl }>;
  /** The Fargate backend when DREACT_EXEC_BACKEND=fargate: the worker also runs the exec reaper's activity. */
  fargate?: FargateBackend;
  /** What exec.python runs on: a backend name, `unavailable` (listed, each call says what to install) or `off`. */
  exec: ExecBackendName | 'unavailable';
}

/** DREACT_EXEC_BACKEND, checked: an unknown name stops the start with the list of known ones. */
export function execBackendName(env: NodeJS.ProcessEnv = process.env): ExecBackendName {
  const name = env.DREACT_EXEC_BACKEND?.trim() || 'local';
  if (!(EXEC_BACKENDS as readonly string[]).includes(name))
    throw new Error(`DREACT_EXEC_BACKEND=${name}: no such exec backend (use one of ${EXEC_BACKENDS.join(' | ')})`);
  return name as ExecBackendName;
}

export async function workerToolSet(opts: WorkerToolSetOptions = {}): Promise<WorkerToolSet> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const name = execBackendName(env);
  // An agent's `exec.backend` may name another backend this worker can start (docker, wasm).
  const others: Record<string, () => ExecBackend> = { docker: () => new DockerBackend() };
  if ((opts.wasmProbe ?? probeWasm)().ok) others.wasm = () => new WasmBackend();
  const tool = (backend: ExecBackend) => createExecTool({ ...opts.exec, backend, backends: others });
  /** The wasm backend, warmed in the background (its first call then finds a sandbox ready). */
  const wasm = (version: string, why: string): WorkerToolSet => {
    const backend = new WasmBackend();
    if (opts.warm !== false)
      backend
        .warmUp()
        .catch((err: Error) => log(`exec.python: wasm warm-up failed (the first call retries): ${err.message}`));
    log(wasmStartLine(version, why));
    return { extraTools: [tool(backend)], exec: 'wasm' };
  };
  switch (name) {
    case 'off':
      log('exec.python: off (DREACT_EXEC_BACKEND=off)');
      return { extraTools: [], exec: 'off' };
    case 'fargate': {
      // The AWS SDK loads only with the Fargate backend (it adds to every worker start otherwise).
      const fargate = (
        require('../activities/exec/fargate/backend') as typeof import('../activities/exec/fargate/backend')
      ).fargateBackendFromEnv(env);
      log('exec.python: fargate');
      return { extraTools: [tool(fargate)], fargate, exec: 'fargate' };
    }
    case 'docker':
      log('exec.python: docker');
      return { extraTools: [tool(new DockerBackend())], exec: 'docker' };
    case 'wasm': {
      const w = (opts.wasmProbe ?? probeWasm)();
      if (!w.ok) throw new Error(`DREACT_EXEC_BACKEND=wasm: ${w.reason} (npm install pyodide)`);
      return wasm(w.version, 'DREACT_EXEC_BACKEND=wasm');
    }
    case 'local': {
      if (env.DREACT_EXEC_UNSAFE_LOCAL === '1') {
        log('exec.python: local, NOT isolated (DREACT_EXEC_UNSAFE_LOCAL=1)');
        return { extraTools: [tool(new LocalBackend({ unsafe: true }))], exec: 'local' };
      }
      const probe = await (opts.probe ?? (() => probeBubblewrap(env)))();
      if (!probe.ok) {
        // No bubblewrap: Python in WebAssembly, which needs nothing but Node and the npm packages.
        const w = (opts.wasmProbe ?? probeWasm)();
        if (w.ok) return wasm(w.version, probe.reason);
        log(`exec.python: unavailable — ${probe.reason}; ${w.reason}. ${BUBBLEWRAP_REMEDY}`);
        return { extraTools: [unavailableExecTool('local', probe.reason)], exec: 'unavailable' };
      }
      log(`exec.python: local (bubblewrap ${probe.bwrapPath})`);
      return { extraTools: [tool(new LocalBackend({ bwrapPath: probe.bwrapPath }))], exec: 'local' };
    }
  }
}
