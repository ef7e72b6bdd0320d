/**
 * The compacted view of a timeline: which blocks the model sees, in which order.
 *
 * The timeline is append-only, so a compaction appends its summary (and the blocks it preserves)
 * at the end; the summary names the first block it kept (`meta.kept_from_block_id`). The view
 * puts the summary batch first, then the kept blocks, then everything appended after the batch;
 * what the summary covers is out of view (still in Postgres, `react.read` restores it).
 *
 * A mid-turn checkpoint (`conv.turn.checkpoint`) hides the current turn's prefix before its cut
 * (`meta.cut_before_block_id`), except the turn header and the user's prompt, and stands in its
 * place. Only the latest checkpoint of a turn is in view.
 *
 * Pure; indices refer to the input array.
 */
import type { Block } from '../timeline/block';

export const CHECKPOINT_TYPE = 'conv.turn.checkpoint' as const;

/** Original indices of the blocks in view, in the order the model sees them. */
export function viewIndices(blocks: readonly Block[]): number[] {
  let si = -1;
  for (let i = blocks.length - 1; i >= 0; i--) {
    if (blocks[i]!.type === 'conv.range.summary') {
      si = i;
      break;
    }
  }
  let order: number[];
  if (si < 0) {
    order = blocks.map((_, i) => i);
  } else {
    const summary = blocks[si]!;
    const keptFrom = summary.meta['kept_from_block_id'];
    const cid = summary.meta['compaction_id'];
    let end = si;
    while (cid !== undefined && end + 1 < blocks.length && blocks[end + 1]!.meta['compaction_id'] === cid) end++;
    const ki = typeof keptFrom === 'string' ? blocks.findIndex((b) => b.id === keptFrom) : -1;
    const range = (a: number, b: number) => Array.from({ length: Math.max(0, b - a) }, (_, k) => a + k);
    order =
      ki >= 0 && ki < si
        ? [...range(si, end + 1), ...range(ki, si), ...range(end + 1, blocks.length)]
        : range(si, blocks.length);
  }
  return applyCheckpoint(blocks, order);
}

/** The blocks in view, in view order. */
export function compactedView(blocks: readonly Block[]): Block[] {
  return viewIndices(blocks).map((i) => blocks[i]!);
}

function applyCheckpoint(blocks: readonly Block[], order: number[]): number[] {
  let ci = -1;
  for (let k = order.length - 1; k >= 0; k--) {
    if (blocks[order[k]!]!.type === CHECKPOINT_TYPE) {
      ci = order[k]!;
      break;
    }
  }
  const withoutCheckpoints = order.filter((i) => blocks[i]!.type !== CHECKPOINT_TYPE);
  if (ci < 0) return withoutCheckpoints;
  const cp = blocks[ci]!;
  const cut = cp.meta['cut_before_block_id'];
  const cutAt = withoutCheckpoints.findIndex((i) => blocks[i]!.id === cut);
  if (cutAt < 0) return withoutCheckpoints;
  const out: number[] = [];
  let placed = false;
  withoutCheckpoints.forEach((i, k) => {
    const b = blocks[i]!;
    const hidden =
      k < cutAt &&
      b.turn_id === cp.turn_id &&
      b.meta['compaction_id'] === undefined &&
      b.type !== 'turn.header' &&
      b.type !== 'user.prompt';
    if (hidden) {
      if (!placed) out.push(ci);
      placed = true;
      return;
    }
    if (k === cutAt && !placed) {
      out.push(ci);
      placed = true;
    }
    out.push(i);
  });
  return out;
}
