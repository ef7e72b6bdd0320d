/**
 * Retention (`dreact gc`): conversations with no activity for `inactiveDays` are purged, each by a
 * PurgeConversationWorkflow (`purge/<conversationId>`, visible in Temporal UI) that stops the
 * conversation and removes all its rows. Running it again finds nothing left to purge.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../store/db';
import { inactiveConversations } from '../store/purge-store';
import { TASK_QUEUE } from '../core/turn/contracts';
import type { PurgeConversationWorkflow, PurgeResult } from '../contract/workflows';

export interface GcOptions {
  inactiveDays: number;
  dryRun?: boolean;
  taskQueue?: string;
  now?: Date;
  /** At most this many conversations per run (default 1 000). */
  limit?: number;
}

export async function collectGarbage(
  temporal: Client,
  db: Db,
  opts: GcOptions,
): Promise<{ candidates: string[]; purged: PurgeResult[] }> {
  if (!Number.isFinite(opts.inactiveDays) || opts.inactiveDays < 0)
    throw new Error(`inactive days must be a number ≥ 0, got ${String(opts.inactiveDays)}`);
  const before = new Date((opts.now ?? new Date()).getTime() - opts.inactiveDays * 86_400_000);
  const candidates = await inactiveConversations(db.pool, before, opts.limit ?? 1000);
  if (opts.dryRun) return { candidates, purged: [] };
  const purged = await Promise.all(
    candidates.map((conversationId) =>
      temporal.workflow.execute<PurgeConversationWorkflow>('PurgeConversationWorkflow', {
        taskQueue: opts.taskQueue ?? TASK_QUEUE,
        workflowId: `purge/${conversationId}`,
        args: [{ conversationId }],
        staticSummary: `purge conversation ${conversationId} (retention)`,
      }),
    ),
  );
  return { candidates, purged };
}
