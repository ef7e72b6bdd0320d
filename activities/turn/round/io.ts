/**
 * The I/O steps every decision round shares, whatever its protocol (runtime channels or native
 * tool calling): folding user events into the timeline, persisting TTL-pruning results,
 * recording usage, and the steer interruption.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import { ProviderError } from '../../../core/model/provider';
import { toActivityFailure } from '../../providers/errors';
import { attemptLostFailure } from '../../cancellation';
import { estimateCost } from '../../../core/model/pricing';
import { activePriceTable, providerOfId } from '../../providers/pricing-file';
import type { PruneResult } from '../../../core/timeline/prune';
import type { UserEvent } from '../../../core/turn/contracts';
import { eventBlock, interruptedRoundBlock } from '../../../core/turn/round-blocks';
import { appendBlocks, setOverlays } from '../../../store/timeline-store';
import { recordUsage, type UsageRow } from '../../../store/usage-store';
import { activityLog } from '../../log';
import { contextLengthFailure, type BudgetCheck } from '../context-budget';
import type { StreamPublisher } from '../../../store/publisher';
import type { SourceRef } from '../../../core/channels';
import { recordModelUsage } from '../../telemetry/metrics';
import { turnOwner } from '../../governance/owner';
import type { ModelProvider, ModelRequest } from '../../../core/model/provider';

/** What streaming one round's model call needs, whatever the protocol. */
export interface RoundStreamArgs {
  provider: ModelProvider;
  request: ModelRequest;
  /** The activity's cancellation signal (a steer). */
  signal: AbortSignal;
  heartbeat: (details: unknown) => void;
  publisher: StreamPublisher;
  round: number;
  /** Pool rows for live [[S:n]] resolution. */
  sources: SourceRef[];
}

/** Folds events received since the last boundary (idempotent by message id); announces new ones. */
export async function foldEvents(
  pool: Pool,
  conversationId: string,
  turnId: string,
  events: UserEvent[],
  ts: string,
  publisher: StreamPublisher,
): Promise<void> {
  const folded = events.map((ev) => ({ ev, block: eventBlock(turnId, ev, ts) }));
  const inserted = new Set(
    await appendBlocks(
      pool,
      conversationId,
      folded.map((f) => f.block),
    ),
  );
  for (const { ev, block } of folded) {
    if (inserted.has(block.id))
      publisher.emit({ kind: 'inject', payload: { type: ev.kind, messageId: ev.messageId, text: ev.text } });
  }
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

const LEDGER_RETRY = { attempts: 40, delayMs: 250 };

/** Runs `fn`, retrying a failure after `delayMs` up to `attempts` times; the last failure propagates. */
async function withRetries<T>(fn: () => Promise<T>, opts: { attempts: number; delayMs: number }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= opts.attempts) throw err;
      activityLog().warn(`usage ledger write failed (attempt ${attempt}/${opts.attempts}): ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, opts.delayMs));
    }
  }
}

/** Records one model call in the usage ledger (with an estimated cost when the model is priced) and streams it. */
export async function recordRoundUsage(
  pool: Pool,
  publisher: StreamPublisher | undefined,
  row: Omit<UsageRow, 'costUsd'>,
): Promise<void> {
  let costUsd: number | undefined;
  if (row.model) {
    try {
      costUsd = estimateCost(row.usage, row.model, activePriceTable(), providerOfId(row.provider)).total;
    } catch (err) {
      activityLog().warn(`usage: ${(err as Error).message}`);
    }
  }
  // What the provider billed must reach the ledger even across a database blip (a restart, a
  // failover): the write is an idempotent upsert, retried for ~10 s before the round fails.
  await withRetries(() => recordUsage(pool, { ...row, costUsd }), LEDGER_RETRY);
  // A finished call's tokens and cost as metrics too (activities/telemetry/metrics.ts).
  if (!row.cut) {
    const { tenantId } = await turnOwner(pool, row.conversationId);
    recordModelUsage({
      provider: providerOfId(row.provider),
      ...(row.model !== undefined ? { model: row.model } : {}),
      purpose: row.purpose ?? 'decision',
      tenant: tenantId,
      usage: row.usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
  }
  publisher?.emit({
    kind: 'usage',
    payload: {
      round: row.round,
      usage: row.usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(row.model !== undefined ? { model: row.model } : {}),
    },
  });
}

/** Records a round a steer interrupted, flushes the stream and returns the failure that acknowledges the cancel. */
export async function interruptRound(
  pool: Pool,
  conversationId: string,
  turnId: string,
  round: number,
  ts: string,
  publisher: StreamPublisher,
): Promise<CancelledFailure> {
  await appendBlocks(pool, conversationId, [interruptedRoundBlock(turnId, round, ts)]);
  publisher.emit({ kind: 'step', payload: { phase: 'interrupted', round } });
  await publisher.close();
  return new CancelledFailure('decision round cancelled by a steer');
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
