/**
 * Which model answered a decision round, kept on the round's call blocks and completion
 * (`meta.answered_by`): a retried round returns the outcome its first attempt recorded
 * (core/turn/stored-outcome.ts), and that outcome names the same model. Pure.
 */
import type { Block } from '../timeline/block';
import type { ServedBy } from './provider';

export const ANSWERED_BY_META = 'answered_by';

/** The round's blocks that a stored outcome is read from, stamped with the model that answered. */
export function stampAnsweredBy(blocks: readonly Block[], by: ServedBy): Block[] {
  return blocks.map((b) =>
    b.type === 'react.tool.call' || b.type === 'assistant.completion'
      ? { ...b, meta: { ...b.meta, [ANSWERED_BY_META]: { ...by } } }
      : b,
  );
}

/** The model a block says answered its round, if it says. */
export function answeredByOf(block: Block | undefined): ServedBy | undefined {
  const v = block?.meta[ANSWERED_BY_META] as { provider?: unknown; model?: unknown } | undefined;
  if (!v || typeof v.provider !== 'string') return undefined;
  return { provider: v.provider, ...(typeof v.model === 'string' ? { model: v.model } : {}) };
}
