/**
 * planCompaction: runs the pure cut planner over the conversation's blocks and records the plan
 * under the compaction id (the summarise and commit activities read it there; history carries
 * only counts). A plan that cannot reduce the visible tokens is recorded as skipped; a
 * conversation whose last 3 compactions failed is refused (the breaker).
 */
import type { ActivityDeps } from '../deps';
import type { CompactionInput, CompactionPlanOutcome } from '../../core/turn/activity-contracts';
import { loadBlocks } from '../../store/timeline-store';
import { compactionFailures, loadCompaction, loadCharsPerToken, savePlan } from '../../store/compaction-store';
import { planCut, type CutPlan } from '../../core/compaction/cut';
import { DEFAULT_CHARS_PER_TOKEN } from '../../core/compaction/estimate';
import { publishCompact } from './publish';

export const BREAKER_FAILURES = 3;

export function makePlanCompaction(deps: ActivityDeps) {
  return async function planCompaction(input: CompactionInput): Promise<CompactionPlanOutcome> {
    const pool = deps.db.pool;
    const { compactionId } = input;
    const { conversationId, turnId } = input.turn;
    const recorded = await loadCompaction(pool, conversationId, compactionId);
    if (recorded) return outcomeOf(recorded.plan as StoredPlan);
    const failures = await compactionFailures(pool, conversationId);
    if (failures >= BREAKER_FAILURES) return { status: 'breaker_open', failures };
    const blocks = await loadBlocks(pool, conversationId);
    const ratio = (await loadCharsPerToken(pool, conversationId)) ?? DEFAULT_CHARS_PER_TOKEN;
    // The provider said "too long" although the estimate fit: the estimate is low, so aim under it.
    const forced = input.reason === 'context_length' && input.estimate <= input.budget;
    const budget = forced ? Math.floor(input.estimate * 0.7) : input.budget;
    const cut = planCut({
      blocks,
      currentTurnId: turnId,
      budget,
      systemTokens: input.systemTokens,
      estimate: Math.max(input.estimate, budget + 1),
      charsPerToken: ratio,
    });
    const stored: StoredPlan = { cut, reason: input.reason, budget };
    const skipped = cut.kind === 'none' || cut.tokensAfter >= cut.tokensBefore;
    await savePlan(pool, conversationId, compactionId, turnId, skipped ? 'skipped' : 'planned', stored);
    const outcome = outcomeOf(stored);
    await publishCompact(
      pool,
      { conversationId, turnId },
      {
        phase: outcome.status === 'planned' ? 'start' : 'skipped',
        compactionId,
        reason: input.reason,
        tokensBefore: input.estimate,
        budget: input.budget,
        ...(outcome.status === 'planned'
          ? { coveredTurns: outcome.coveredTurns.length, tokensAfter: outcome.tokensAfter }
          : {}),
      },
    );
    return outcome;
  };
}

export interface StoredPlan {
  cut: CutPlan;
  reason: CompactionInput['reason'];
  budget: number;
}

function outcomeOf(p: StoredPlan): CompactionPlanOutcome {
  const c = p.cut;
  if (c.kind === 'none')
    return {
      status: 'skipped',
      reason: c.reason === 'under_budget' ? 'no_visible_token_reduction' : c.reason,
      tokensBefore: 0,
    };
  if (c.tokensAfter >= c.tokensBefore)
    return { status: 'skipped', reason: 'no_visible_token_reduction', tokensBefore: c.tokensBefore };
  return {
    status: 'planned',
    kind: c.kind,
    coveredTurns: c.coveredTurnIds,
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
  };
}
