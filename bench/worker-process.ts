/**
 * A worker as its own process (workers/main.ts), as in production: benches and the chaos suite
 * start, kill and measure it (start-up time to polling, CPU and resident memory from /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureWorkerBuild } from '../workers/build';

export interface WorkerProcess {
  child: ChildProcess;
  /** Milliseconds from spawn to polling. */
  ready: Promise<number>;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | NodeJS.Signals | null>;
  /** Everything the worker wrote to stderr (its log). */
  log(): string;
}

/**
 * Starts workers/main.ts as a process: compiled (`node dist/worker.cjs`, rebuilt first when a
 * source changed — workers/build.ts), as deployed, or from its TypeScript sources through tsx.
 */
export function spawnWorkerProcess(
  env: Record<string, string>,
  opts: { from?: 'compiled' | 'sources'; script?: string; compiled?: string } = {},
): WorkerProcess {
  // `script`: another worker's TypeScript entry (the peers bench's peer worker), run through tsx.
  // `compiled`: another tree's compiled worker (its dist/worker.cjs), as built there.
  const entry = opts.script
    ? ['--import', 'tsx', opts.script]
    : opts.compiled
      ? [opts.compiled]
      : opts.from === 'sources'
        ? ['--import', 'tsx', join(__dirname, '..', 'workers', 'main.ts')]
        : [ensureWorkerBuild()];
  const t0 = Date.now();
  let log = '';
  // DREACT_BENCH_WORKER_NODE_ARGS: extra node flags for the worker (e.g. --cpu-prof to profile a bench).
  const nodeArgs = (process.env.DREACT_BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    env: { ...process.env, DREACT_EXEC_BACKEND: 'off', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const ready = new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += String(d);
      if (log.includes('[worker] polling')) resolve(Date.now() - t0);
    });
    void exited.then((how) =>
      reject(new Error(`the worker exited (${String(how)}) before polling:\n${log.slice(-2000)}`)),
    );
  });
  // A worker killed later must not leave an unhandled rejection behind.
  ready.catch(() => undefined);
  return { child, ready, exited, log: () => log };
}

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After the command: state is field 3; utime and stime are fields 14 and 15 (1-based).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident memory in bytes, from /proc/<pid>/status. */
export function residentBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Every running process with its command line (arguments joined by spaces), from /proc. */
function* processes(): Generator<{ pid: number; cmdline: string }> {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue; // the process ended while we looked
    }
    yield { pid: Number(entry), cmdline };
  }
}

/** The pid of the process whose command line contains every one of `parts` (e.g. the dev server by its port), if any. */
export function pidByCommandLine(...parts: string[]): number | undefined {
  for (const { pid, cmdline } of processes()) if (parts.every((p) => cmdline.includes(p))) return pid;
  return undefined;
}

/**
 * CPU seconds used so far by every process whose command line contains `part` (e.g. Postgres'
 * backends, titled "postgres: …"), per pid: `cpuDelta(before, after)` sums what each used between.
 */
export function cpuByCommandLine(part: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const { pid, cmdline } of processes()) {
    if (!cmdline.includes(part)) continue;
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {
      continue; // the process ended while we looked
    }
  }
  return out;
}

/** CPU seconds the processes used between two cpuByCommandLine readings (a process new since `before` counts from 0). */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
}

/** Busy and total CPU time of the whole machine (all cores, in clock ticks), from /proc/stat. */
export function machineCpuTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = fields.map(Number);
  const idle = (n[3] ?? 0) + (n[4] ?? 0); // idle + iowait
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0); // user … steal (guest time is inside user)
  return { busy: total - idle, total };
}
