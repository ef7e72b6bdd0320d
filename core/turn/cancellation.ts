/**
 * A person (or a program) cancelling a running turn: the `cancel` signal's payload, the words the
 * timeline and the surfaces use for it, and the turn's `system.message` block that records it.
 * A cancel is not a steer: the turn does not finalize with the model, it stops — its in-flight
 * round, tool call or approval wait is interrupted, the timeline is closed and persisted, and the
 * turn ends with the `cancelled` completion path. Pure and deterministic (the turn's workflow requires it in its cancel handler only).
 */
import { z } from 'zod';
import { blockId, makeBlock, type Block } from '../timeline/block';
import { paths } from '../timeline/paths';
import { cancelledBy } from './cancelled-by';

/** `system.message` meta kind of the block that records a turn's cancellation. */
export const TURN_CANCELLED_KIND = 'turn_cancelled';

const BLOCK_NAME = 'turn_cancelled';

/** The cancel signal's payload: who cancels (a user id, `key <id>`, `schedule <id>`…) and why. */
export const CancelRequestSchema = z.strictObject({
  by: z
    .string({ error: 'by is required (who cancels the turn)' })
    .trim()
    .min(1, 'by is empty (who cancels the turn)')
    .max(200, 'by is too long (200 characters at most)'),
  reason: z.string().trim().max(500, 'reason is too long (500 characters at most)').optional(),
});
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

/** "cancelled by <who>" (": <reason>" when one was given): the one wording of a cancellation. */
export { cancelledBy };

/** The block id of the turn's cancellation record (one per turn: the first cancel wins). */
export function turnCancelledBlockId(turnId: string): string {
  return blockId(turnId, 'system.message', BLOCK_NAME);
}

/** The `system.message` recording that the turn was cancelled; the next turn's model reads it. */
export function turnCancelledBlock(turnId: string, req: CancelRequest, ts: string): Block {
  return makeBlock({
    type: 'system.message',
    author: 'system',
    turn_id: turnId,
    ts,
    key: BLOCK_NAME,
    path: paths.systemMessage(turnId, BLOCK_NAME),
    text: `[SYSTEM MESSAGE] This turn was ${cancelledBy(req)}. It stopped where it was; it is not a steer and no answer followed.`,
    meta: { kind: TURN_CANCELLED_KIND, by: req.by, ...(req.reason ? { reason: req.reason } : {}) },
  });
}

/** The cancellation a block records, or undefined when it is not a turn's cancellation record. */
export function cancellationOf(block: Block | undefined): CancelRequest | undefined {
  if (!block || block.type !== 'system.message' || block.meta['kind'] !== TURN_CANCELLED_KIND) return undefined;
  const by = block.meta['by'];
  const reason = block.meta['reason'];
  if (typeof by !== 'string') return undefined;
  return { by, ...(typeof reason === 'string' ? { reason } : {}) };
}
