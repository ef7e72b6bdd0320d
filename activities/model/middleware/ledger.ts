/**
 * The usage ledger's side of a model call: `recordUsageRow` writes one call's row (with an
 * estimated cost when the model is priced), counts it in the metrics and streams it; `ledgerSink`
 * is the meter's sink (meter.ts) for one call — the row names the provider and model that answered
 * (a fallback chain may have moved on) and is streamed to the conversation's clients when the call
 * finishes. Decision rounds and side calls (title, tool selection, synthesis, compaction, judge)
 * write their rows here alike (activities/model/gateway.ts).
 */
import type { Pool } from 'pg';
import { estimateCost } from '../../../core/model/pricing';
import { recordUsage, type UsageRow } from '../../../store/usage-store';
import type { StreamPublisher } from '../../../store/publisher';
import { turnOwner } from '../../governance/owner';
import { activityLog } from '../../log';
import { recordModelUsage } from '../../telemetry/metrics';
import { activePriceTable, providerOfId } from '../pricing-file';
import type { UsageSink } from './meter';

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
export async function recordUsageRow(
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

/** What a call's rows share: ids, key, the provider and model asked first, the purpose (absent: a decision). */
export type LedgerRow = Pick<
  UsageRow,
  'conversationId' | 'turnId' | 'round' | 'callKey' | 'provider' | 'model' | 'purpose'
>;

/**
 * The meter's sink of one call: every report becomes the call's row (unfinished ones `cut` until
 * the final report completes it); `onReport` hears who answered; `beforeFinal` runs before the
 * final row is written (a chaos point of the round).
 */
export function ledgerSink(
  pool: Pool,
  row: LedgerRow,
  opts: {
    publisher?: StreamPublisher;
    onReport?: (by: { provider?: string; model?: string }) => void;
    beforeFinal?: () => Promise<void>;
  } = {},
): UsageSink {
  return async ({ usage, final, requestId, provider, model }) => {
    opts.onReport?.({ provider, model });
    const answered: Omit<UsageRow, 'costUsd'> = {
      ...row,
      ...(provider !== undefined ? { provider } : {}),
      ...(model !== undefined ? { model } : {}),
      usage,
      cut: !final,
      ...(requestId !== undefined ? { requestId } : {}),
    };
    if (!final) return recordUsageRow(pool, undefined, answered);
    await opts.beforeFinal?.();
    return recordUsageRow(pool, opts.publisher, answered);
  };
}
