/** `dreact timeline --debug`: the model's view of the timeline with cache checkpoints marked `=>[n]`. */
import type { Block } from '../../core/timeline/block';
import { renderTimeline } from '../../core/timeline/render';
import { createToolRegistry } from '../../core/tools';
import { systemPromptFor } from '../../core/decision/prompt';

export function debugRender(blocks: Block[], now = Date.now()): string {
  const last = blocks[blocks.length - 1];
  if (!last) return '(empty timeline)';
  const out = renderTimeline(
    {
      blocks,
      currentTurnId: last.turn_id,
      systemPrompt: systemPromptFor(createToolRegistry(), 'off'),
      announce: { iteration: 1, maxIterations: 1 },
    },
    { now, debug: true },
  );
  return `${out.debugText ?? ''}\n\n(${out.breakpoints} cache breakpoints: ${out.checkpoints.map((c) => `${c.kind}@${c.blockId}`).join(', ')})`;
}
