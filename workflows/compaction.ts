/**
 * CompactionWorkflow: a child of TurnWorkflow (`conv/<id>/turn/<n>/compact/<k>`), started before
 * a round whose request would not fit the context budget, or after the provider refused one as
 * too long. Plan the cut → summarise the range → commit the batch; history carries ids and counts
 * only. A plan that cannot reduce the visible tokens ends as `skipped`; a failure after the
 * activities' retries counts towards the conversation's breaker (3 in a row stop compaction).
 */
import { isCancellation, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { CompactionActivities } from '../activities/compaction';
import type { CompactionInput, CompactionResult } from '../core/turn/activity-contracts';
import { roleQueues } from './role-queue';
import { compactionFinished } from './metrics';

const { planCompaction, commitCompaction, recordCompactionFailure } = proxyActivities<CompactionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

const { summarizeRange } = proxyActivities<CompactionActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 4 },
});

/** `1–14` for turn_1…turn_14, `3` for one turn. */
export function turnRange(turnIds: readonly string[]): string {
  const nums = turnIds.map((t) => /(\d+)$/.exec(t)?.[1] ?? t);
  if (nums.length === 0) return 'current turn';
  return nums.length === 1 ? nums[0]! : `${nums[0]}–${nums[nums.length - 1]}`;
}

/** `61200` → `61 200` (no Intl: plain string work in workflow code). */
const fmt = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

export async function CompactionWorkflow(input: CompactionInput): Promise<CompactionResult> {
  const result = await compaction(input);
  compactionFinished(result.status);
  return result;
}

async function compaction(input: CompactionInput): Promise<CompactionResult> {
  let shown = '';
  // The summariser runs on the models role's queue; a wait for a models worker shows below the line.
  const roles = roleQueues(input.placement, () => setCurrentDetails([shown, ...roles.waiting()].join('\n\n')));
  const plan = await planCompaction.executeWithOptions(
    { summary: `plan compaction (${fmt(input.estimate)} tokens, budget ${fmt(input.budget)}, ${input.reason})` },
    [input],
  );
  if (plan.status === 'breaker_open') {
    setCurrentDetails(`compaction stopped: the last ${plan.failures} compactions of this conversation failed`);
    return plan;
  }
  if (plan.status === 'skipped') {
    await recordCompactionFailure.executeWithOptions({ summary: `record skipped compaction (${plan.reason})` }, [
      { ...input, error: `skipped: ${plan.reason}` },
    ]);
    setCurrentDetails(`compaction skipped: ${plan.reason}`);
    return { status: 'skipped', reason: plan.reason, tokensBefore: plan.tokensBefore };
  }
  const what =
    plan.kind === 'mid_turn'
      ? `turns ${turnRange(plan.coveredTurns)} + current prefix → checkpoint`
      : `turns ${turnRange(plan.coveredTurns)} → summary`;
  const line = `compact ${what} (${fmt(plan.tokensBefore)} → ${fmt(plan.tokensAfter)} tokens)`;
  shown = line;
  setCurrentDetails(line);
  try {
    const summarized = await roles.run('models', undefined, (placed) =>
      summarizeRange.executeWithOptions(
        { summary: `summarise ${what}`, heartbeatTimeout: roles.timeouts.modelsHeartbeatMs, ...placed },
        [input],
      ),
    );
    const committed = await commitCompaction.executeWithOptions({ summary: line }, [input]);
    return {
      status: 'compacted',
      coveredTurns: plan.coveredTurns,
      tokensBefore: plan.tokensBefore,
      tokensAfter: committed.tokensAfter,
      usage: summarized.usage,
    };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const error =
      err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
        : String(err);
    const { failures } = await recordCompactionFailure.executeWithOptions({ summary: 'record failed compaction' }, [
      { ...input, error },
    ]);
    return { status: 'failed', error, failures };
  }
}
