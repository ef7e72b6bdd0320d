/**
 * The ANNOUNCE state of one decision round (iteration, budget or the finalize notice, live turn
 * events, workspace) — the same in either protocol; core/timeline/announce.ts renders it. Pure.
 */
import type { AnnounceState } from '../timeline/announce';
import type { Block } from '../timeline/block';
import type { DecideInput } from './activity-contracts';

export function announceState(
  input: Pick<DecideInput, 'iteration' | 'mode'>,
  nowIso: string,
  liveEvents: string[],
  workspace: string[],
  finalizeNotice: string,
  /** Tool availability notices (activities/mcp: servers down, tools refused); none: no [TOOLS] section. */
  tools: string[] = [],
): AnnounceState {
  const it = input.iteration;
  const finalize = input.mode === 'finalize';
  return {
    iteration: Math.max(1, finalize ? it.index + 1 : it.index),
    maxIterations: Math.max(it.max, finalize ? it.index + 1 : 1),
    baseIterations: it.base,
    bonusIterations: it.bonus,
    budget: finalize ? [finalizeNotice] : [`${Math.max(0, it.max - it.index)} decision rounds left after this one`],
    liveEvents,
    workspace,
    ...(tools.length ? { tools } : {}),
    nowIso,
  };
}

/** Live turn events of the current turn for ANNOUNCE. */
export function liveEventLines(blocks: readonly Block[], turnId: string): string[] {
  return blocks
    .filter((b) => b.turn_id === turnId && (b.type === 'user.followup' || b.type === 'user.steer'))
    .map(
      (b) =>
        `${b.type === 'user.steer' ? 'steer' : 'followup'} ${String(b.meta.message_id ?? '')}: ${(b.text ?? '').slice(0, 200)}`,
    );
}
