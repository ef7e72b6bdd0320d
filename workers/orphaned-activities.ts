/**
 * A worker on the host fails the activities a dead worker of the same task queue left running —
 * when it starts (it may be the dead one's replacement) and every second after (it may be a
 * sibling) — so their retries start now instead of after their heartbeat timeouts
 * (workers/activity-journal.ts says why and how they are known).
 *
 * Only journals of the same server, namespace and task queue are taken, only when their writer is
 * gone (its pid is not running, or runs another process), and each by one worker (claimed by an
 * atomic rename). Every attempt is failed by its task token with a retryable `WorkerLost` failure
 * naming the dead worker: the activity's retry policy decides what happens next, exactly as after
 * a heartbeat timeout (one attempt spent). An attempt that ended meanwhile (it timed out, or it
 * completed before the worker died) is counted as already settled.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ActivityNotFoundError, AsyncCompletionClient, type ConnectionLike } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { isJournalFile, readJournal, writerIsAlive, type JournalHeader } from './activity-journal';

export const WORKER_LOST = 'WorkerLost';

/** A dead worker's journal of another task queue is removed after this long. */
const STALE_MS = 24 * 3600_000;

export interface OrphanRelease {
  /** Dead workers' journals taken. */
  journals: number;
  /** Attempts failed, so their retries start now. */
  released: number;
  /** Attempts the server had already settled (timed out, or completed just before the kill). */
  settled: number;
  /** Workflows of those attempts whose sticky queue (the dead worker's) was reset. */
  unstuck: number;
  /** Attempts the server refused to fail for another reason: they wait for their heartbeat timeout. */
  errors: string[];
}

/** gRPC status NOT_FOUND. */
const GRPC_NOT_FOUND = 5;

/** When the file last changed (now if another worker removed it meanwhile). */
function modifiedAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Date.now();
    throw err;
  }
}

export async function releaseOrphanedActivities(opts: {
  dir: string;
  connection: ConnectionLike;
  /** This worker: only journals with the same address / namespace / queue are taken. */
  self: Pick<JournalHeader, 'pid' | 'identity' | 'address' | 'namespace' | 'taskQueue'>;
  /** This worker's own journal's path, skipped. */
  ownJournal?: string;
}): Promise<OrphanRelease> {
  const { dir, self } = opts;
  const out: OrphanRelease = { journals: 0, released: 0, settled: 0, unstuck: 0, errors: [] };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  const client = new AsyncCompletionClient({ connection: opts.connection, namespace: self.namespace });
  for (const name of names.filter(isJournalFile)) {
    const file = join(dir, name);
    if (file === opts.ownJournal) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // another worker claimed it
      throw err;
    }
    let journal: ReturnType<typeof readJournal>;
    try {
      journal = readJournal(text);
    } catch (err) {
      out.errors.push(`${name}: unreadable journal left in place (${(err as Error).message})`);
      continue;
    }
    const { header } = journal;
    if (writerIsAlive(header)) continue;
    if (header.address !== self.address || header.namespace !== self.namespace || header.taskQueue !== self.taskQueue) {
      // Another queue's: kept for its own successor while it may matter; nothing to release, or a
      // day old (every activity in it has timed out since), and it goes.
      if (journal.open.length === 0 || Date.now() - modifiedAt(file) > STALE_MS) rmSync(file, { force: true });
      continue;
    }
    // Claim it: of two workers starting together, one rename succeeds.
    const claimed = `${file}.claimed-${self.pid}`;
    try {
      renameSync(file, claimed);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    out.journals++;
    // Its writer is gone: what the file holds now is final.
    const { open: entries } = readJournal(readFileSync(claimed, 'utf8'));
    // First their workflows forget the dead worker's sticky queue: the workflow task that follows
    // each retry goes to the shared queue at once instead of waiting out the sticky timeout there.
    const workflows = new Map(entries.flatMap((e) => (e.workflow ? [[e.workflow.runId, e.workflow] as const] : [])));
    await Promise.all(
      [...workflows.values()].map(async (execution) => {
        try {
          await opts.connection.workflowService.resetStickyTaskQueue({ namespace: self.namespace, execution });
          out.unstuck++;
        } catch (err) {
          // Closed meanwhile: nothing to unstick. Anything else only costs that workflow its sticky timeout.
          if ((err as { code?: number }).code !== GRPC_NOT_FOUND)
            out.errors.push(`reset sticky queue of ${execution.workflowId}: ${(err as Error).message}`);
        }
      }),
    );
    await Promise.all(
      entries.map(async (entry) => {
        try {
          await client.fail(
            Buffer.from(entry.taskToken, 'base64'),
            ApplicationFailure.retryable(
              `worker ${header.identity} (pid ${header.pid}) exited while running this ${entry.activityType} attempt; ` +
                `failed by worker ${self.identity} so the retry need not wait for the heartbeat timeout`,
              WORKER_LOST,
            ),
          );
          out.released++;
        } catch (err) {
          if (err instanceof ActivityNotFoundError) out.settled++;
          else out.errors.push(`${entry.activityType}: ${(err as Error).message}`);
        }
      }),
    );
    rmSync(claimed, { force: true });
  }
  return out;
}

/**
 * Releases dead workers' activities now and then every `everyMs` while this worker runs: a worker
 * restarted on the host takes its predecessor's at its start, and a sibling on the same host and
 * queue takes a dead one's within a second even when nothing restarts it. Each distinct problem is
 * logged once.
 */
export function watchForOrphanedActivities(opts: {
  dir: string;
  connection: ConnectionLike;
  self: Pick<JournalHeader, 'pid' | 'identity' | 'address' | 'namespace' | 'taskQueue'>;
  ownJournal: string;
  everyMs?: number;
  log?: (line: string) => void;
}): { stop(): Promise<void> } {
  const log = opts.log ?? ((line: string) => console.error(line));
  const reported = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const scan = async () => {
    const t0 = Date.now();
    try {
      const r = await releaseOrphanedActivities(opts);
      if (r.journals > 0)
        log(
          `[worker] released ${r.released} activities a dead worker left running (${r.settled} already settled; ` +
            `${r.unstuck} workflows off its sticky queue) from ${r.journals} journal(s) in ${Date.now() - t0} ms`,
        );
      for (const e of r.errors) {
        if (reported.has(e)) continue;
        reported.add(e);
        log(`[worker] could not release an orphaned activity: ${e}`);
      }
    } catch (err) {
      // Their activities still retry, after their heartbeat timeouts.
      const line = `[worker] releasing orphaned activities failed: ${err instanceof Error ? err.message : String(err)}`;
      if (!reported.has(line)) log(line);
      reported.add(line);
    }
  };
  const loop = () => {
    current = scan().then(() => {
      if (!stopped) timer = setTimeout(loop, opts.everyMs ?? 1000);
    });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
