/**
 * The timeline's note when a round is answered by another model than the one before it: a fallback
 * chain moved on (the primary was overloaded, …), or the primary answers again after a fallback.
 * The timeline itself stays as it is — every model reads the same blocks — and the note says what
 * changes: the prompt cache is per provider, so the first call on the other model writes its cache
 * (it reads none), and rounds back on the earlier model read their own cache while it is warm.
 *
 * "The model before" is the last note's model in the conversation, else the round's primary (the
 * model its config names first). A round answered by that same model adds nothing. Pure and
 * deterministic: the block's id derives from the turn and round, so a retried round's append is
 * idempotent.
 */
import { makeBlock, type Block } from '../timeline/block';
import { paths } from '../timeline/paths';
import type { ServedBy } from './provider';

export const MODEL_SWITCH_KIND = 'model_switch';

/** The model the conversation's last switch note names, if any. */
export function lastNotedModel(blocks: readonly Block[]): ServedBy | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (b.type !== 'system.message' || b.meta['kind'] !== MODEL_SWITCH_KIND) continue;
    const provider = b.meta['provider'];
    const model = b.meta['model'];
    if (typeof provider !== 'string') continue;
    return { provider, ...(typeof model === 'string' ? { model } : {}) };
  }
  return undefined;
}

const named = (m: ServedBy): string => m.provider;

/**
 * The `system.message` block noting the switch, or undefined when the round's model is the one
 * before. `reason` is the classified failure that moved a chain on (absent: the primary again).
 */
export function modelSwitchNote(args: {
  blocks: readonly Block[];
  turnId: string;
  round: number;
  ts: string;
  /** The model the round's config names first. */
  primary: ServedBy;
  /** The model that answered the round. */
  answered: ServedBy;
  reason?: string;
}): Block | undefined {
  const { turnId, round, answered } = args;
  const before = lastNotedModel(args.blocks) ?? args.primary;
  if (before.provider === answered.provider) return undefined;
  const now = named(answered);
  const was = named(before);
  const text = args.reason
    ? `[SYSTEM MESSAGE] Round ${round} was answered by ${now} instead of ${was} (${was}: ${args.reason}). ` +
      `The timeline is unchanged. The prompt cache is per provider: the first call on ${now} writes its ` +
      `own cache and reads none of ${was}'s.`
    : `[SYSTEM MESSAGE] Round ${round} was answered by ${now} again, after ${was}. The timeline is unchanged. ` +
      `The prompt cache is per provider: ${now} reads its own cache where it is still warm and writes the rest.`;
  const name = `model_switch_r${round}`;
  return makeBlock({
    type: 'system.message',
    author: 'system',
    turn_id: turnId,
    ts: args.ts,
    key: name,
    path: paths.systemMessage(turnId, name),
    text,
    meta: {
      kind: MODEL_SWITCH_KIND,
      iteration: round,
      provider: answered.provider,
      ...(answered.model !== undefined ? { model: answered.model } : {}),
      from_provider: before.provider,
      ...(before.model !== undefined ? { from_model: before.model } : {}),
      ...(args.reason ? { reason: args.reason } : {}),
    },
  });
}
