/**
 * Host-side files of one exec, shared by the backends: the runtime directory mounted read-only at
 * /runtime (the program, the dreact_tools helper, the supervisor socket), the sandbox's clean
 * environment, ownership for the dropped UID, and collecting outputs and the log tail under caps.
 * Collecting never follows a symlink: the collector runs with the worker's rights.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ExecCollected, ExecLimits, ExecSpec } from './backend';
import { projectFile } from '../../store/project-files';

/** UID/GID the program runs as (nobody). */
export const SANDBOX_UID = 65534;
/** Mount points inside the sandbox (the only four: work, outputs, logs, runtime with the supervisor socket). */
export const MOUNT = {
  work: '/workspace/work',
  out: '/workspace/out',
  logs: '/workspace/logs',
  runtime: '/runtime',
} as const;
export const PROGRAM_FILE = 'main.py';
const HELPER_SOURCE = projectFile('activities', 'exec', 'proxy', 'dreact_tools.py');

export const DEFAULT_EXEC_LIMITS: ExecLimits = {
  wallTimeMs: 60_000,
  memoryBytes: 1024 * 1024 * 1024,
  cpus: 1,
  maxProcesses: 64,
  maxFileBytes: 20 * 1024 * 1024,
  maxOutputFiles: 64,
  maxOutputBytes: 50 * 1024 * 1024,
  maxLogBytes: 64 * 1024,
};

/** The host directory mounted at /runtime: the socket's directory when the proxy is on, else `fallback`. */
export function runtimeDirOf(spec: ExecSpec, fallback: string): string {
  return spec.supervisorSocket ? path.dirname(spec.supervisorSocket) : fallback;
}

/** Writes the program and the tool helper into the runtime dir; makes the writable mounts the sandbox user's. */
export async function prepareSandboxFiles(spec: ExecSpec, runtimeDir: string): Promise<void> {
  await fs.mkdir(runtimeDir, { recursive: true });
  await fs.chmod(runtimeDir, 0o755); // listable: Python's import system lists the directory
  await fs.writeFile(path.join(runtimeDir, PROGRAM_FILE), spec.code, { mode: 0o644 });
  await fs.copyFile(HELPER_SOURCE, path.join(runtimeDir, 'dreact_tools.py'));
  await fs.chmod(path.join(runtimeDir, 'dreact_tools.py'), 0o644);
  for (const dir of [spec.workDir, spec.outputDir, spec.logDir]) {
    await fs.mkdir(dir, { recursive: true });
    await chownTree(dir);
  }
}

/** When the worker is root, hands a tree to the sandbox UID (the program runs as nobody). */
export async function chownTree(dir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  await fs.lchown(dir, SANDBOX_UID, SANDBOX_UID);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(p);
    else await fs.lchown(p, SANDBOX_UID, SANDBOX_UID);
  }
}

/** The program's whole environment: no secrets, nothing inherited from the worker. */
export function sandboxEnv(spec: ExecSpec): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/tmp',
    LANG: 'C.UTF-8',
    OUTPUT_DIR: MOUNT.out,
    LOG_DIR: MOUNT.logs,
    EXECUTION_ID: spec.execId,
    PYTHONPATH: MOUNT.runtime,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    ...(spec.supervisorSocket
      ? { DREACT_SUPERVISOR_SOCKET: `${MOUNT.runtime}/${path.basename(spec.supervisorSocket)}` }
      : {}),
  };
}

/** The last `maxBytes` of a file as UTF-8 (a partial leading character dropped); '' when absent. */
export async function readTail(file: string, maxBytes: number): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    const text = buf.toString('utf8');
    return start > 0 ? text.replace(/^\uFFFD+/, '') : text;
  } finally {
    await handle.close();
  }
}

/**
 * Lists the output directory under the caps: regular files only (symlinks, devices and FIFOs are
 * dropped with a reason and never opened), at most `maxOutputFiles`, `maxOutputBytes` in total,
 * none over `maxFileBytes`. Paths are relative, sorted.
 */
export async function listOutputs(
  outputDir: string,
  limits: ExecLimits,
): Promise<Pick<ExecCollected, 'outputFiles' | 'dropped'>> {
  const found: Array<{ path: string; sizeBytes: number }> = [];
  const dropped: Array<{ path: string; reason: string }> = [];
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(dir, e.name);
      const st = await fs.lstat(full);
      if (st.isSymbolicLink()) dropped.push({ path: relPath, reason: 'is a symbolic link (not collected)' });
      else if (st.isDirectory()) {
        if (depth >= 8) dropped.push({ path: relPath, reason: 'directory nested too deep' });
        else await walk(full, relPath, depth + 1);
      } else if (!st.isFile()) dropped.push({ path: relPath, reason: 'not a regular file' });
      else found.push({ path: relPath, sizeBytes: st.size });
    }
  };
  try {
    await walk(outputDir, '', 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const outputFiles: Array<{ path: string; sizeBytes: number }> = [];
  let total = 0;
  for (const f of found) {
    if (f.sizeBytes > limits.maxFileBytes)
      dropped.push({ path: f.path, reason: `${f.sizeBytes} bytes, over the ${limits.maxFileBytes}-byte file cap` });
    else if (outputFiles.length >= limits.maxOutputFiles)
      dropped.push({ path: f.path, reason: `over the ${limits.maxOutputFiles}-file output cap` });
    else if (total + f.sizeBytes > limits.maxOutputBytes)
      dropped.push({ path: f.path, reason: `over the ${limits.maxOutputBytes}-byte output cap` });
    else {
      outputFiles.push(f);
      total += f.sizeBytes;
    }
  }
  return { outputFiles, dropped };
}
