/**
 * Which model answered a round: the primary unless a fallback chain moved on (its `fallback` part),
 * refined by the provider's own `response-metadata` (the ledger's report). The round's outcome
 * names it (`answeredBy`), and a round answered by another model than the one before adds a
 * timeline note (core/model/switch-note.ts). Whether the note is due follows the chain's switches
 * only — not the metadata's wording of a model id — so a turn without fallbacks never gets one.
 */
import type { Block } from '../../core/timeline/block';
import type { ServedBy } from '../../core/model/provider';
import { modelSwitchNote } from '../../core/model/switch-note';

export interface AnsweringModel {
  /** A ledger report named the provider / model that answered. */
  reported(by: { provider?: string; model?: string }): void;
  /** The chain moved on to `to` after `reason`. */
  switched(to: ServedBy, reason: string): void;
  /** The model that answered (the primary until told otherwise). */
  readonly answeredBy: ServedBy;
  /** The round's switch note, when its model is not the one before. */
  note(at: { blocks: readonly Block[]; turnId: string; round: number; ts: string }): Block[];
}

export function answeringModel(primary: ServedBy): AnsweringModel {
  let answeredBy: ServedBy = primary;
  let chain: { to: ServedBy; reason: string } | undefined;
  return {
    reported(by) {
      if (by.provider === undefined && by.model === undefined) return;
      answeredBy = {
        provider: by.provider ?? answeredBy.provider,
        ...((by.model ?? answeredBy.model) !== undefined ? { model: by.model ?? answeredBy.model } : {}),
      };
    },
    switched(to, reason) {
      chain = { to, reason };
      answeredBy = to;
    },
    get answeredBy() {
      return answeredBy;
    },
    note({ blocks, turnId, round, ts }) {
      const block = modelSwitchNote({
        blocks,
        turnId,
        round,
        ts,
        primary,
        answered: chain?.to ?? primary,
        ...(chain ? { reason: chain.reason } : {}),
      });
      return block ? [block] : [];
    },
  };
}
