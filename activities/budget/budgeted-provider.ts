/**
 * The one wrapper that puts a spend check before every model call, whatever it is for (decision
 * rounds in the round pipeline; title, tool selection, synthesis and compaction through
 * ledgeredProvider): before the call streams, its worst case (the request's estimated input tokens
 * at the model's dearest input rate + max_tokens at its output rate, core/governance/budget.ts) is
 * reserved in Postgres against every budget that covers the conversation and, for decision rounds,
 * the turn's own cap — a subagent's call against every budget and turn cap above it too
 * (core/governance/spend-rollup.ts) — at the price of the model that will be called: when a fallback
 * chain moves on, the call is reserved again at the next model's price (and output budget) before
 * that model is called, and a refusal there ends the call; when the call ends — finished, failed or cut — the reservation is released and
 * its ledger row (written by meteredProvider inside this wrapper) is what counts. A refused call
 * throws BudgetExceededError before any request is sent; a budget store that cannot be read throws
 * too (fail closed: no unchecked call). Reservations expire after DREACT_SPEND_RESERVATION_TTL_SECONDS
 * (default 900: longer than a decision round's 10-minute attempt), so a killed worker's do not hold
 * a budget for long.
 *
 * A call no budget covers (and no turn cap) takes no reservation: a reservation only ever counts
 * against a budget. Whether one covers the conversation is read just before the call — by the
 * round's own read statement for decision rounds (`scope.budgeted`, store/round-reads.ts), else by
 * one statement here — so a budget set before a call starts applies to it, and an unreadable
 * budget table still refuses the call (the read throws). That saves a tenant without budgets the
 * reservation's transaction and its release (~6 statements) on every model call.
 */
import type { Pool } from 'pg';
import type { ModelProvider, StreamPart } from '../../core/model/provider';
import { estimateTokens, requestChars } from '../../core/compaction/estimate';
import { BudgetExceededError, worstCaseUsd, type BudgetUse } from '../../core/governance/budget';
import { budgetsCover, releaseSpend, reserveSpend } from '../../store/budget-store';
import type { StreamPublisher } from '../../store/publisher';
import { turnOwner } from '../governance/owner';
import { activityLog } from '../log';
import { activePriceTable, providerOfId } from '../providers/pricing-file';

/** Chars per token for the worst case: below the usual ~4, so the estimate errs high. */
const WORST_CASE_CHARS_PER_TOKEN = 3;

export function reservationTtlSeconds(): number {
  const v = Number(process.env.DREACT_SPEND_RESERVATION_TTL_SECONDS ?? 900);
  return Number.isFinite(v) && v >= 1 ? v : 900;
}

export interface SpendScope {
  conversationId: string;
  turnId: string;
  /** The call's ledger key (the reservation's key too). */
  callKey: string;
  model?: string;
  /** The turn's own cap (the agent's limits.spend_usd_per_turn), for decision rounds. */
  turnCapUsd?: number;
  /** Where 80 % warnings and refusals are streamed. */
  publisher?: StreamPublisher;
  /**
   * Whether a budget covers the conversation, when the caller has just read it (a decision round's
   * read, store/round-reads.ts); undefined: this wrapper reads it before the call.
   */
  budgeted?: boolean;
}

/** Warnings already streamed per conversation and budget (one per period is enough). */
const warned = new Map<string, number>();

function emitUse(publisher: StreamPublisher | undefined, phase: 'warning' | 'exceeded', use: BudgetUse, key: string) {
  if (!publisher) return;
  if (phase === 'warning') {
    const k = `${key}\u0000${use.label}`;
    if ((warned.get(k) ?? 0) > Date.now() - 60_000) return;
    if (warned.size > 10_000) warned.clear();
    warned.set(k, Date.now());
  }
  publisher.emit({
    kind: 'budget',
    payload: {
      phase,
      budget: use.label,
      capUsd: use.capUsd,
      usedUsd: use.spentUsd + use.reservedUsd,
      spentUsd: use.spentUsd,
      reservedUsd: use.reservedUsd,
    },
  });
}

export function budgetedProvider(provider: ModelProvider, pool: Pool, scope: SpendScope): ModelProvider {
  return {
    id: provider.id,
    ...(provider.model !== undefined ? { model: provider.model } : {}),
    async *stream(request, options): AsyncGenerator<StreamPart> {
      const owner = await turnOwner(pool, scope.conversationId);
      if (scope.turnCapUsd === undefined) {
        const budgeted = scope.budgeted ?? (await budgetsCover(pool, owner, scope.conversationId));
        if (!budgeted) {
          yield* provider.stream(request, options);
          return;
        }
      }
      // The worst case (serialising the whole request) only when a reservation is taken.
      const inputTokens = estimateTokens(requestChars(request), WORST_CASE_CHARS_PER_TOKEN);
      // Priced like the ledger row will be (activities/turn/round/io.ts recordRoundUsage), at the
      // model that will be called: the request's, or — a fallback chain moving on — the next one's.
      const reserve = async (model: string | undefined, providerId: string, maxTokens: number) => {
        const amountUsd = worstCaseUsd(inputTokens, maxTokens, model, providerOfId(providerId), activePriceTable());
        const reserved = await reserveSpend(pool, {
          conversationId: scope.conversationId,
          turnId: scope.turnId,
          callKey: scope.callKey,
          owner,
          amountUsd,
          ttlSeconds: reservationTtlSeconds(),
          ...(scope.turnCapUsd !== undefined ? { turnCapUsd: scope.turnCapUsd } : {}),
        });
        if (!reserved.ok) {
          emitUse(scope.publisher, 'exceeded', reserved.refused, scope.conversationId);
          throw new BudgetExceededError(reserved.refused);
        }
        for (const use of reserved.warnings) emitUse(scope.publisher, 'warning', use, scope.conversationId);
      };
      await reserve(request.model ?? scope.model ?? provider.model, provider.id, request.maxTokens);
      try {
        for await (const part of provider.stream(request, options)) {
          // The chain moves to another model: the call is reserved again at its price before it is
          // called (a dearer fallback cannot slip past a cap at the primary's price; refused, it is never called).
          if (part.type === 'fallback')
            await reserve(part.to.model, part.to.provider, part.maxTokens ?? request.maxTokens);
          yield part;
        }
      } finally {
        await releaseSpend(pool, scope.conversationId, scope.callKey).catch((err: Error) =>
          activityLog().warn(
            `spend: the reservation of ${scope.callKey} was not released (it expires): ${err.message}`,
          ),
        );
      }
    },
  };
}
