/**
 * The worker's journal of the activities it is running: one small file per worker process, in
 * DREACT_WORKER_STATE_DIR, holding each started activity's task token until the activity ends.
 *
 * Why: a worker killed with SIGKILL (OOM killer, a crash, `kill -9`) leaves its activities
 * "started" on the server until their heartbeat timeout (2 s for a decision round) before any retry
 * may begin. The worker that starts next on the same host and task queue reads the dead worker's
 * journal and fails those attempts at once (workers/orphaned-activities.ts), so their retries
 * start as soon as it polls. A task token names one attempt: failing it can never touch a retry.
 *
 * Format: a JSON header line (who wrote it: pid, the process's start time, the server, namespace
 * and task queue), then `+<n> <base64 task token> <activity type> <workflow id (URI-encoded)>
 * <run id>` when an activity starts and `-<n>` when it ends. Writes are synchronous appends of one line (no fsync: a killed process's
 * writes are in the page cache; a host crash loses its activities to their heartbeat timeouts, as
 * before). The file is rewritten with only the open entries every few thousand lines, and removed
 * when the worker stops cleanly.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { z } from 'zod';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export const JournalHeaderSchema = z.object({
  v: z.literal(1),
  pid: z.number().int().positive(),
  /** The process's start, as the kernel tells it (boot id + start tick); null where /proc is missing. */
  processStart: z.string().nullable(),
  identity: z.string(),
  address: z.string(),
  namespace: z.string(),
  taskQueue: z.string(),
  startedAt: z.string(),
});
export type JournalHeader = z.infer<typeof JournalHeaderSchema>;

export interface OpenActivity {
  taskToken: string;
  activityType: string;
  /** The workflow the activity belongs to (journals from before this field lack it). */
  workflow?: { workflowId: string; runId: string };
}

/** Lines written between two rewrites (a rewrite keeps only the open entries). */
const REWRITE_EVERY = 4096;

/** DREACT_WORKER_STATE_DIR, else a folder in the system's temporary directory. */
export function workerStateDir(env = process.env.DREACT_WORKER_STATE_DIR): string {
  return env && env.trim() !== '' ? env : join(tmpdir(), 'dreact-worker-state');
}

/**
 * One file per process, named by pid and start: a worker restarted in a container is often pid 1
 * again, and must not write over the journal of the pid 1 before it.
 */
export const journalFileName = (pid: number, startedAtMs: number) => `activities-${pid}-${startedAtMs}.journal`;
export const isJournalFile = (name: string) => /^activities-\d+-\d+\.journal$/.test(name);

/**
 * The kernel's identity of a running process: boot id and start tick (so a pid reused after a
 * reboot or by another process never looks like the one that wrote a journal); null off Linux.
 */
export function processStartOf(pid: number): string | null | 'gone' {
  let stat: string;
  let boot: string;
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null; // no /proc: liveness falls back to signalling the pid
  }
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 'gone';
  }
  // After the command (which may hold spaces and parentheses): field 3 is the state, field 22 the
  // start time in ticks. A zombie (killed, not reaped yet by its parent) runs nothing any more.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return 'gone';
  return `${boot}:${fields[19]}`;
}

/** True while the process that wrote `header` runs (the same pid AND the same process start). */
export function writerIsAlive(header: JournalHeader): boolean {
  const now = processStartOf(header.pid);
  if (now === 'gone') return false;
  if (now !== null && header.processStart !== null) return now === header.processStart;
  try {
    process.kill(header.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A journal's header and the activities it had started and not ended (a torn last line is ignored). */
export function readJournal(text: string): { header: JournalHeader; open: OpenActivity[] } {
  const lines = text.split('\n');
  // Only complete lines count: the last element is '' after a final newline, or a torn write.
  lines.pop();
  if (lines.length === 0) throw new Error('the journal has no header line');
  const header = JournalHeaderSchema.parse(JSON.parse(lines[0]!));
  const open = new Map<string, OpenActivity>();
  for (const line of lines.slice(1)) {
    if (line.startsWith('+')) {
      const [n, taskToken, activityType, workflowId, runId] = line.slice(1).split(' ');
      if (!n || !taskToken) throw new Error(`bad journal line: ${JSON.stringify(line.slice(0, 80))}`);
      open.set(n, {
        taskToken,
        activityType: activityType ?? '?',
        ...(workflowId && runId ? { workflow: { workflowId: decodeURIComponent(workflowId), runId } } : {}),
      });
    } else if (line.startsWith('-')) {
      open.delete(line.slice(1));
    } else {
      throw new Error(`bad journal line: ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  return { header, open: [...open.values()] };
}

export interface ActivityJournal {
  readonly file: string;
  readonly header: JournalHeader;
  /** Records a started activity; returns its entry number for `ended`. */
  started(taskToken: string, activityType: string, workflow?: { workflowId: string; runId: string }): number;
  ended(entry: number): void;
  /** The worker stopped cleanly: nothing of it is left to release. */
  remove(): void;
}

export function openActivityJournal(
  dir: string,
  who: Omit<JournalHeader, 'v' | 'pid' | 'processStart' | 'startedAt'>,
): ActivityJournal {
  mkdirSync(dir, { recursive: true });
  const startedAt = new Date();
  const file = join(dir, journalFileName(process.pid, startedAt.getTime()));
  const start = processStartOf(process.pid);
  const header: JournalHeader = {
    v: 1,
    pid: process.pid,
    processStart: start === 'gone' ? null : start,
    ...who,
    startedAt: startedAt.toISOString(),
  };
  const open = new Map<number, string>();
  let next = 0;
  let lines = 0;
  let fd = -1;
  const write = (text: string) => {
    writeSync(fd, text);
    lines++;
  };
  /** Writes the header and the open entries to a new file that replaces the old one at once. */
  const rewrite = () => {
    const tmp = `${file}.tmp`;
    const tmpFd = openSync(tmp, 'w');
    writeSync(tmpFd, `${JSON.stringify(header)}\n` + [...open.values()].join(''));
    renameSync(tmp, file);
    if (fd >= 0) closeSync(fd);
    fd = tmpFd;
    lines = 0;
  };
  rewrite();
  return {
    file,
    header,
    started(taskToken, activityType, workflow) {
      const n = ++next;
      const wf = workflow ? ` ${encodeURIComponent(workflow.workflowId)} ${workflow.runId}` : '';
      const line = `+${n} ${taskToken} ${activityType}${wf}\n`;
      open.set(n, line);
      if (lines >= REWRITE_EVERY) rewrite();
      else write(line);
      return n;
    },
    ended(n) {
      if (!open.delete(n)) return;
      if (lines >= REWRITE_EVERY) rewrite();
      else write(`-${n}\n`);
    },
    remove() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
      rmSync(file, { force: true });
    },
  };
}

/** Records every (non-local) activity the worker runs in `journal` while it runs. */
export function journalInterceptor(journal: ActivityJournal): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        // A local activity is part of its workflow task: it has no task token of its own to fail.
        if (ctx.info.isLocal) return next(input);
        const entry = journal.started(ctx.info.base64TaskToken, ctx.info.activityType, ctx.info.workflowExecution);
        try {
          return await next(input);
        } finally {
          journal.ended(entry);
        }
      },
    },
  });
}
