/**
 * commitCompaction: appends the compaction's batch (range summary, preserved notes and events,
 * carried plan, plan history, mid-turn checkpoint) and marks it committed in one transaction,
 * with deterministic block ids: a retried or replayed commit never writes twice.
 * recordCompactionFailure counts a failed or skipped compaction towards the breaker.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import type { CompactionInput } from '../../core/turn/activity-contracts';
import { loadBlocks } from '../../store/timeline-store';
import { commitCompactionBatch, loadCompaction, recordCompactionFailure } from '../../store/compaction-store';
import { compactionBatch } from '../../core/compaction/outputs';
import { publishCompact } from './publish';
import type { StoredPlan } from './plan';

export function makeCommitCompaction(deps: ActivityDeps) {
  return async function commitCompaction(input: CompactionInput): Promise<{ blocks: number; tokensAfter: number }> {
    const pool = deps.db.pool;
    const { compactionId } = input;
    const { conversationId, turnId } = input.turn;
    const row = await loadCompaction(pool, conversationId, compactionId);
    if (!row) throw ApplicationFailure.nonRetryable(`compaction ${compactionId} has no plan`, 'CompactionNoPlan');
    const { cut } = row.plan as StoredPlan;
    if (cut.kind === 'none')
      throw ApplicationFailure.nonRetryable(`compaction ${compactionId} was skipped`, 'CompactionSkipped');
    if (row.status === 'committed') return { blocks: 0, tokensAfter: cut.tokensAfter };
    if (row.status !== 'summarized')
      throw ApplicationFailure.nonRetryable(
        `compaction ${compactionId} is ${row.status}, not summarised`,
        'CompactionNotSummarised',
      );
    const blocks = await loadBlocks(pool, conversationId);
    const batch = compactionBatch({
      compactionId,
      turnId,
      ts: deps.now().toISOString(),
      blocks,
      coveredIds: cut.coveredIds,
      coveredTurnIds: cut.coveredTurnIds,
      keptFromId: cut.keptFromId,
      summary: row.summary ?? '',
      ...(cut.kind === 'mid_turn' && cut.cutBeforeId && row.prefixSummary
        ? { checkpoint: { text: row.prefixSummary, cutBeforeId: cut.cutBeforeId, prefixIds: cut.prefixIds } }
        : {}),
      tokensBefore: cut.tokensBefore,
      tokensAfter: cut.tokensAfter,
    });
    const { inserted } = await commitCompactionBatch(pool, conversationId, compactionId, batch);
    await publishCompact(
      pool,
      { conversationId, turnId },
      {
        phase: 'committed',
        compactionId,
        kind: cut.kind,
        coveredTurns: cut.coveredTurnIds.length,
        tokensBefore: cut.tokensBefore,
        tokensAfter: cut.tokensAfter,
        blocks: batch.length,
      },
    );
    return { blocks: inserted, tokensAfter: cut.tokensAfter };
  };
}

export function makeRecordCompactionFailure(deps: ActivityDeps) {
  return async function recordCompactionFailureActivity(
    input: CompactionInput & { error: string },
  ): Promise<{ failures: number }> {
    const { conversationId, turnId } = input.turn;
    const failures = await recordCompactionFailure(deps.db.pool, conversationId, input.compactionId, input.error);
    await publishCompact(
      deps.db.pool,
      { conversationId, turnId },
      { phase: 'failed', compactionId: input.compactionId, error: input.error, failures },
    );
    return { failures };
  };
}
