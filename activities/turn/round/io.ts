/**
 * The I/O steps every decision round shares, whatever its protocol (runtime channels or native
 * tool calling; the user events are folded in when the round opens: scope.ts): persisting
 * TTL-pruning results, a failed model call and the steer interruption (usage reaches the ledger through the model gateway: activities/model/).
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import { ProviderError } from '../../../core/model/provider';
import { toActivityFailure } from '../../model/adapters/errors';
import { attemptLostFailure } from '../../cancellation';
import type { PruneResult } from '../../../core/timeline/prune';
import { interruptedRoundBlock } from '../../../core/turn/round-blocks';
import { appendBlocks, loadBlock, setOverlays } from '../../../store/timeline-store';
import { cancellationOf, cancelledBy, turnCancelledBlockId } from '../../../core/turn/cancellation';
import { activityLog } from '../../log';
import type { BudgetCheck } from '../../../core/compaction/estimate';
import { contextLengthFailure } from '../context-budget';
import type { StreamPublisher } from '../../../store/publisher';
import type { SourceRef } from '../../../core/channels';
import type { ModelProvider, ModelRequest } from '../../../core/model/provider';

/** What streaming one round's model call needs, whatever the protocol. */
export interface RoundStreamArgs {
  provider: ModelProvider;
  request: ModelRequest;
  /** The activity's cancellation signal (a steer or the turn's cancel). */
  signal: AbortSignal;
  heartbeat: (details: unknown) => void;
  publisher: StreamPublisher;
  round: number;
  /** Pool rows for live [[S:n]] resolution. */
  sources: SourceRef[];
}

/**
 * Persists what a render's TTL pruning decided: the system.message and hidden overlays (the cache
 * touch is the round's bookkeeping, written after the model call: saveRoundBookkeeping).
 */
export async function persistPruning(
  pool: Pool,
  conversationId: string,
  pruning: PruneResult | undefined,
): Promise<void> {
  if (!pruning) return;
  await appendBlocks(pool, conversationId, pruning.contribute);
  await setOverlays(
    pool,
    conversationId,
    pruning.updates.map((u) => ({
      blockId: u.blockId,
      hidden: true,
      replacementText: u.replacement_text,
      reason: 'cache_ttl_pruned',
    })),
  );
}

/**
 * Records a round the workflow interrupted, flushes the stream and returns the failure that
 * acknowledges the cancel. The turn records its cancellation before it cancels the round
 * (workflows/turn/run.ts), so a round that finds that record was stopped by a cancel, else by a
 * steer — each is called what it is, in the timeline and on the stream.
 */
export async function interruptRound(
  pool: Pool,
  conversationId: string,
  turnId: string,
  round: number,
  ts: string,
  publisher: StreamPublisher,
): Promise<CancelledFailure> {
  const cancel = cancellationOf(await loadBlock(pool, conversationId, turnCancelledBlockId(turnId)));
  await appendBlocks(pool, conversationId, [interruptedRoundBlock(turnId, round, ts, cancel)]);
  publisher.emit({
    kind: 'step',
    payload: { phase: 'interrupted', round, ...(cancel ? { cause: 'cancel', by: cancel.by } : { cause: 'steer' }) },
  });
  await publisher.close();
  return new CancelledFailure(`decision round ${cancel ? cancelledBy(cancel) : 'cancelled by a steer'}`);
}

/**
 * What a failed model call becomes: a steer's cancellation is recorded and acknowledged; an attempt
 * lost otherwise (heartbeat timeout, shutdown, reset) is retried without a record; any other
 * failure flushes the stream and is mapped to a retryable / non-retryable Temporal failure.
 */
export async function roundFailure(
  err: unknown,
  signal: AbortSignal,
  at: { pool: Pool; conversationId: string; turnId: string; round: number; ts: string },
  publisher: StreamPublisher,
  budget?: BudgetCheck,
): Promise<unknown> {
  if (signal.aborted || (err instanceof ProviderError && err.kind === 'aborted')) {
    // Only the workflow's own cancellation (a steer) is recorded as an interrupted round: a
    // heartbeat timeout, a shutdown or a reset ends this attempt and Temporal runs the next.
    const lost = signal.aborted ? attemptLostFailure(`decision round ${at.round}`) : undefined;
    if (lost) {
      await publisher.close();
      return lost;
    }
    return interruptRound(at.pool, at.conversationId, at.turnId, at.round, at.ts, publisher);
  }
  const failure = (budget && contextLengthFailure(err, budget)) ?? toActivityFailure(err);
  // A retryable model error: readers learn now that the round waits for its next attempt, and why.
  if (err instanceof ProviderError && err.retryable && failure instanceof ApplicationFailure && !failure.nonRetryable)
    publisher.emit({
      kind: 'model_error',
      payload: {
        round: at.round,
        error: err.kind,
        ...(err.status !== undefined ? { status: err.status } : {}),
        nextAttempt: Context.current().info.attempt + 1,
      },
    });
  await publisher
    .close()
    .catch((e: Error) =>
      activityLog().error(`round ${at.round}: stream flush failed after a model error: ${e.message}`),
    );
  return failure;
}
