/**
 * `dreact budget show|set`: spend caps in USD (core/governance/budget.ts) per tenant, project, user
 * or conversation, per day or month, in the stack's Postgres (or DATABASE_URL's). `show` prints each
 * budget with what it spent (the usage ledger) and what calls in flight reserved this period.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { BUDGET_PERIODS, BUDGET_SCOPES, type BudgetPeriod, type BudgetScope } from '../../core/governance/budget';
import { budgetUses, deleteBudget, reservedSpend, setBudget } from '../../store/budget-store';
import { withDb } from './policy-command';

export function registerBudgetCommands(program: Command): void {
  const budget = program
    .command('budget')
    .description('spend caps in USD (tenant, project, user, conversation; per day or month)');
  budget
    .command('show')
    .description("a tenant's budgets: cap, spent, reserved by calls in flight")
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--json', 'as JSON')
    .action((o: { tenant: string; json?: boolean }) =>
      withDb(async (db) => {
        const uses = await budgetUses(db.pool, o.tenant);
        const reserved = await reservedSpend(db.pool, o.tenant);
        if (o.json) return void console.log(JSON.stringify({ budgets: uses, reservedUsd: reserved }, null, 2));
        if (uses.length === 0) console.log(`no budget for tenant ${o.tenant}`);
        for (const u of uses)
          console.log(
            `${u.label.padEnd(48)} cap ${u.capUsd.toFixed(2)} USD  spent ${u.spentUsd.toFixed(4)}  reserved ${u.reservedUsd.toFixed(4)}  (${((100 * (u.spentUsd + u.reservedUsd)) / Math.max(u.capUsd, 1e-9)).toFixed(0)} %)`,
          );
        console.log(`reserved now by calls in flight: ${reserved.toFixed(4)} USD`);
      }),
    );
  budget
    .command('set')
    .description('set (or with --delete remove) a cap')
    .requiredOption('--scope <scope>', BUDGET_SCOPES.join(' | '))
    .option('--id <id>', 'the project, user or conversation id (not for a tenant budget)')
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--period <period>', BUDGET_PERIODS.join(' | '), 'day')
    .option('--usd <amount>', 'the cap in USD')
    .option('--delete', 'remove the budget')
    .action((o: { scope: string; id?: string; tenant: string; period: string; usd?: string; delete?: boolean }) => {
      if (!(BUDGET_SCOPES as readonly string[]).includes(o.scope))
        throw new InvalidArgumentError(`--scope: one of ${BUDGET_SCOPES.join(', ')}`);
      if (!(BUDGET_PERIODS as readonly string[]).includes(o.period))
        throw new InvalidArgumentError(`--period: one of ${BUDGET_PERIODS.join(', ')}`);
      if ((o.scope === 'tenant') !== (o.id === undefined))
        throw new InvalidArgumentError(
          o.scope === 'tenant' ? '--id: not for a tenant budget' : `--id: the ${o.scope} id`,
        );
      const key = {
        tenantId: o.tenant,
        scope: o.scope as BudgetScope,
        scopeId: o.id ?? '',
        period: o.period as BudgetPeriod,
      };
      const usd = Number(o.usd);
      if (!o.delete && !(Number.isFinite(usd) && usd >= 0))
        throw new InvalidArgumentError('--usd: a non-negative amount');
      return withDb(async (db) => {
        if (o.delete) console.log((await deleteBudget(db.pool, key)) ? 'budget removed' : 'no such budget');
        else {
          await setBudget(db.pool, { ...key, capUsd: usd });
          console.log(`budget set: ${o.scope}${o.id ? ` ${o.id}` : ''} of ${o.tenant}, ${usd} USD per ${o.period}`);
        }
      });
    });
}
