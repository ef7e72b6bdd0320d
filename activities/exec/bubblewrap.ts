/**
 * Can the local backend sandbox code on this host? Bubblewrap must be on PATH and able to create
 * the namespaces the backend asks for (a container without user namespaces has the binary but
 * cannot use it). The probe runs bwrap once, as the user the sandbox runs as (nobody when the
 * worker is root, as the backend does), with the backend's namespace flags; the result is
 * memoised per binary, so a worker probes once at start and logs it once.
 *
 * Where bubblewrap is missing, `unavailableExecTool` keeps exec.python listed and answers each call
 * with an observation that says what to install: the model (and the user) learn why code does not
 * run, instead of an unknown-tool notice. Nothing is retried: the observation is the result.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants as fsc } from 'node:fs';
import path from 'node:path';
import { declareExecPython, execPython } from '../../core/exec';
import type { AnyToolDeclaration } from '../../core/tools/registry';
import type { ToolImpl } from '../tools/types';
import { SANDBOX_UID } from './sandbox-files';

export type BubblewrapProbe = { ok: true; bwrapPath: string } | { ok: false; reason: string };

/** What to do about it, for the observation and the start log. */
export const BUBBLEWRAP_REMEDY =
  'Install bubblewrap on the worker host (Debian/Ubuntu: `apt-get install bubblewrap`) and restart the worker, ' +
  'or choose another sandbox: DREACT_EXEC_BACKEND=docker (or DREACT_EXEC_BACKEND=off to remove the tool)';

/** The executable `name` in the PATH of `env`, or undefined. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, fsc.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const probes = new Map<string, Promise<BubblewrapProbe>>();

/** Finds bwrap on PATH and checks that it can create the sandbox's namespaces (memoised per binary). */
export function probeBubblewrap(env: NodeJS.ProcessEnv = process.env): Promise<BubblewrapProbe> {
  const bwrapPath = findExecutable('bwrap', env);
  if (!bwrapPath) return Promise.resolve({ ok: false, reason: 'bubblewrap is not installed (no `bwrap` on PATH)' });
  let probe = probes.get(bwrapPath);
  if (!probe) {
    probe = runProbe(bwrapPath);
    probes.set(bwrapPath, probe);
  }
  return probe;
}

function runProbe(bwrapPath: string): Promise<BubblewrapProbe> {
  const sandbox = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--ro-bind',
    '/',
    '/',
    '/bin/true',
  ];
  // As root the backend drops to the sandbox user before bwrap: probe the same way.
  const [file, args] =
    process.getuid?.() === 0
      ? ['setpriv', [`--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--', bwrapPath, ...sandbox]]
      : [bwrapPath, sandbox];
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: 10_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } },
      (err, _stdout, stderr) => {
        if (!err) return resolve({ ok: true, bwrapPath });
        const why = String(stderr).trim() || err.message;
        resolve({
          ok: false,
          reason: `bubblewrap (${bwrapPath}) cannot create the sandbox's namespaces here: ${why.split('\n')[0]}`,
        });
      },
    );
  });
}

/**
 * exec.python where the sandbox cannot run: listed as usual, and every call is an `ok: false`
 * observation naming what is missing and what to install. No sandbox, no retry.
 */
export function unavailableExecTool(
  backend: string,
  reason: string,
  remedy = BUBBLEWRAP_REMEDY,
): { declaration: AnyToolDeclaration; impl: ToolImpl } {
  const text =
    `exec.python is unavailable on this worker, nothing was run: ${reason}. ${remedy}. ` +
    'Until then, answer without running code.';
  return {
    declaration: declareExecPython(backend),
    impl: {
      id: execPython.id,
      async launch() {
        // nothing to start: the await step reports why
      },
      async run() {
        return { ok: false, text, meta: { exec_refused: 'sandbox_unavailable', backend, reason } };
      },
    },
  };
}
