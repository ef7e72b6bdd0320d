/**
 * A provider whose every call has its own usage-ledger row, for the activities that make model
 * calls outside a decision round: the title (gate), tool selection, answer synthesis and
 * compaction summaries. One such activity may call the model several times (a structured call
 * falls back a level or asks for a reformat), and any of those calls may be cut: each gets the row
 * `meteredProvider` keeps for a decision round — written when the provider first reports usage,
 * completed at its end, marked `cut` if it never ends, with the provider's request id — under the
 * key `<callKeyPrefix>/<n>` for the n-th call of the attempt.
 */
import type { Pool } from 'pg';
import type { ModelProvider } from '../../core/model/provider';
import { meteredProvider } from '../model/middleware/meter';
import type { StreamPublisher } from '../../store/publisher';
import { recordRoundUsage } from './round/io';
import { budgetedProvider } from '../model/middleware/spend';

export interface LedgerScope {
  conversationId: string;
  turnId: string;
  /** Per activity attempt (e.g. `turn_1/gate/2`): the attempt's n-th call is `<prefix>/<n>`. */
  callKeyPrefix: string;
  purpose: 'title' | 'tool_selection' | 'synthesis' | 'compaction' | 'judge';
  model?: string;
  /** Streams each finished call's usage to the conversation's live clients. */
  publisher?: StreamPublisher;
}

export function ledgeredProvider(provider: ModelProvider, pool: Pool, scope: LedgerScope): ModelProvider {
  const model = scope.model ?? (provider as { model?: string }).model;
  let calls = 0;
  return {
    id: provider.id,
    ...(model !== undefined ? { model } : {}),
    stream(request, options) {
      const callKey = `${scope.callKeyPrefix}/${++calls}`;
      // Spend caps: the call's worst case is reserved first (activities/model/middleware/spend.ts).
      const spend = {
        conversationId: scope.conversationId,
        turnId: scope.turnId,
        callKey,
        ...(model !== undefined ? { model } : {}),
        ...(scope.publisher ? { publisher: scope.publisher } : {}),
      };
      const metered = meteredProvider(
        provider,
        ({ usage, final, requestId, provider: answeredBy, model: answeredWith }) =>
          recordRoundUsage(pool, final ? scope.publisher : undefined, {
            conversationId: scope.conversationId,
            turnId: scope.turnId,
            round: 0,
            callKey,
            // The provider and model that answered (a fallback chain may have moved on).
            provider: answeredBy ?? provider.id,
            ...((answeredWith ?? model) !== undefined ? { model: answeredWith ?? model } : {}),
            usage,
            purpose: scope.purpose,
            cut: !final,
            ...(requestId !== undefined ? { requestId } : {}),
          }),
      );
      return budgetedProvider(metered, pool, spend).stream(request, options);
    },
  };
}
