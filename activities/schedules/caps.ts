/**
 * The caps a schedule run is checked against before it starts a turn: the schedule's own
 * (`maxUsdPerDay`, what its runs' turns spent today) and its owner's budgets (tenant, project,
 * user, conversation — the ones every turn's model calls reserve against, store/budget-store.ts).
 * A run a cap refuses is recorded as refused and ends; it is not retried.
 */
import type { Pool } from 'pg';
import { budgetUses } from '../../store/budget-store';
import { scheduleSpentToday } from '../../store/schedules/run-store';
import type { ScheduledRunInput } from '../../core/schedules/run';

const usd = (n: number) => n.toFixed(4);

/** Why the run may not start, or undefined when no cap stops it. */
export async function capRefusal(
  pool: Pool,
  input: Pick<ScheduledRunInput, 'scheduleId' | 'owner' | 'maxUsdPerDay'>,
  conversationId: string,
): Promise<string | undefined> {
  if (input.maxUsdPerDay !== undefined) {
    const spent = await scheduleSpentToday(pool, input.scheduleId);
    if (spent >= input.maxUsdPerDay)
      return `schedule ${input.scheduleId} cap: its runs spent ${usd(spent)} of ${usd(input.maxUsdPerDay)} USD today (UTC)`;
  }
  const { tenantId, projectId, userId } = input.owner;
  for (const use of await budgetUses(pool, tenantId)) {
    const b = use.budget;
    const covers =
      b.scope === 'tenant' ||
      (b.scope === 'project' && b.scopeId === projectId) ||
      (b.scope === 'user' && userId !== null && b.scopeId === userId) ||
      (b.scope === 'conversation' && b.scopeId === conversationId);
    if (covers && use.spentUsd + use.reservedUsd >= use.capUsd)
      return `${use.label}: spent ${usd(use.spentUsd)} and reserved ${usd(use.reservedUsd)} of ${usd(use.capUsd)} USD`;
  }
  return undefined;
}
