/**
 * What the wasm backend is and cannot do, for the worker's one start line: it runs the Python
 * standard library only. The npm package `pyodide` ships the interpreter and its standard library
 * and none of Pyodide's package wheels (numpy, pandas, matplotlib, scipy, micropip… are listed in
 * its pyodide-lock.json but downloaded from a CDN on demand, which this backend never does).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pyodideDir, pyodideVersion } from './pool';

export const WASM_CANNOT =
  'it runs the Python standard library only (no numpy, pandas, matplotlib or other packages: the npm package ships no wheels and nothing is downloaded), ' +
  'one thread (no subprocess, fork or threads), no network (dreact_tools.call reaches the agent’s tools); ' +
  'for those, install bubblewrap (apt-get install bubblewrap) or set DREACT_EXEC_BACKEND=docker';

/** Pyodide's version when its interpreter and standard library are installed, else why not. */
export function probeWasm(): { ok: true; version: string } | { ok: false; reason: string } {
  try {
    const dir = pyodideDir();
    for (const f of ['pyodide.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip'])
      if (!existsSync(path.join(dir, f)))
        return { ok: false, reason: `pyodide is incomplete (${f} is missing in ${dir})` };
    return { ok: true, version: pyodideVersion() };
  } catch (err) {
    return { ok: false, reason: `pyodide is not installed (${(err as Error).message.split('\n')[0]})` };
  }
}

/** The start line: what exec.python runs on, why, and what it cannot do. */
export function wasmStartLine(version: string, why: string): string {
  return `exec.python: wasm (Pyodide ${version}, a sandbox process per call; ${why}) — ${WASM_CANNOT}`;
}
