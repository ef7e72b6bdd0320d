/**
 * Bridge between the decide activity and the pure protocol modules: the cached system prompt
 * (byte-identical across rounds and turns), the render of the timeline into model messages with
 * cache checkpoints, and the ANNOUNCE state of a round.
 */
import type { Block } from '../../core/timeline/block';
import { renderTimeline, type RenderOutput } from '../../core/timeline/render';
import type { AnnounceState } from '../../core/timeline/announce';
import type { SourceRow } from '../../core/timeline/sources';
import type { CacheState } from '../../core/timeline/prune';
import type { DecideInput } from '../../core/turn/contracts';

/** The memoised system prompt lives in core (the CLI's debug render uses it too). */
export { systemPromptFor } from '../../core/decision/prompt';

export const FINALIZE_NOTICE =
  '[FINALIZE] The user steered this turn (see [STEER DURING TURN]). Do not call tools: respond with action "complete" now, answering with what you have and acknowledging the steer.';

export function announceState(input: DecideInput, nowIso: string, liveEvents: string[], workspace: string[] = []): AnnounceState {
  const it = input.iteration;
  return {
    iteration: Math.max(1, input.mode === 'finalize' ? it.index + 1 : it.index),
    maxIterations: Math.max(it.max, input.mode === 'finalize' ? it.index + 1 : 1),
    baseIterations: it.base,
    bonusIterations: it.bonus,
    budget: input.mode === 'finalize' ? [FINALIZE_NOTICE] : [`${Math.max(0, it.max - it.index)} decision rounds left after this one`],
    liveEvents,
    workspace,
    nowIso,
  };
}

/** Live turn events of the current turn for ANNOUNCE. */
export function liveEventLines(blocks: readonly Block[], turnId: string): string[] {
  return blocks
    .filter((b) => b.turn_id === turnId && (b.type === 'user.followup' || b.type === 'user.steer'))
    .map((b) => `${b.type === 'user.steer' ? 'steer' : 'followup'} ${String(b.meta.message_id ?? '')}: ${(b.text ?? '').slice(0, 200)}`);
}

export function renderRound(args: {
  blocks: Block[];
  turnId: string;
  systemPrompt: string;
  sources: SourceRow[];
  announce: AnnounceState;
  cacheState: CacheState;
  now: number;
  debug?: boolean;
  /** After a react.hide in this turn, an old previous-turn checkpoint moves to the pre-tail. */
  suppressPrevTurnCache?: boolean;
}): RenderOutput {
  return renderTimeline(
    { blocks: args.blocks, currentTurnId: args.turnId, systemPrompt: args.systemPrompt, sources: args.sources, announce: args.announce, cacheState: args.cacheState },
    { now: args.now, ttl: {}, debug: args.debug, suppressPrevTurnCache: args.suppressPrevTurnCache },
  );
}
