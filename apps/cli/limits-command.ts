/**
 * `dreact limits show|set`: a tenant's turn concurrency limit (store/turn-slots.ts) — turns beyond
 * it queue, in order, and each shows its position (`dreact turns`). `show` lists the turns running
 * under the limit and the queue; `set --turns N` (or `--delete`) changes it and lets queued turns in
 * at once when there is room (they are signalled through the stack's Temporal).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { deleteTurnLimit, loadTurnLimit, setTurnLimit, tenantSlots } from '../../store/turn-slots';
import { tellGrants } from '../../client/turn-slots';
import { withSession } from './with-session';

export function registerLimitCommands(program: Command): void {
  const limits = program.command('limits').description("a tenant's turn concurrency limit (turns beyond it queue)");
  limits
    .command('show')
    .description('the limit, the turns running under it and the queue (with positions)')
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--json', 'as JSON')
    .action((o: { tenant: string; json?: boolean }) =>
      withSession(async (s) => {
        const [limit, slots] = await Promise.all([
          loadTurnLimit(s.db.pool, o.tenant),
          tenantSlots(s.db.pool, o.tenant),
        ]);
        if (o.json) return void console.log(JSON.stringify({ maxTurns: limit?.maxTurns ?? null, slots }, null, 2));
        console.log(
          limit
            ? `tenant ${o.tenant}: at most ${limit.maxTurns} turn(s) at once`
            : `no turn limit for tenant ${o.tenant}`,
        );
        for (const slot of slots)
          console.log(
            `${slot.granted ? 'running ' : `queued ${String(slot.position).padStart(3)}`}  ${slot.workflowId}`,
          );
      }),
    );
  limits
    .command('set')
    .description('set (or with --delete remove) the limit')
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--turns <n>', 'turns running at once (>= 1)')
    .option('--delete', 'remove the limit (queued turns start)')
    .action((o: { tenant: string; turns?: string; delete?: boolean }) => {
      const turns = Number(o.turns);
      if (!o.delete && !(Number.isInteger(turns) && turns >= 1))
        throw new InvalidArgumentError('--turns: a whole number of turns, at least 1');
      return withSession(async (s) => {
        if (o.delete)
          console.log((await deleteTurnLimit(s.db.pool, o.tenant)) ? 'turn limit removed' : 'no turn limit');
        else {
          await setTurnLimit(s.db.pool, { tenantId: o.tenant, maxTurns: turns });
          console.log(`turn limit set: tenant ${o.tenant}, ${turns} turn(s) at once`);
        }
        const started = await tellGrants(s.db.pool, s.temporal, o.tenant);
        if (started.length > 0) console.log(`${started.length} queued turn(s) started`);
      });
    });
}
