/** `dreact gc --inactive-days N [--dry-run]`: retention of inactive conversations (client/gc.ts). */
import { InvalidArgumentError, type Command } from 'commander';
import { withSession } from './with-session';

export function registerGcCommand(program: Command): void {
  program
    .command('gc')
    .description('purge conversations with no activity for N days (timeline, artifacts, stream, usage, turns)')
    .requiredOption(
      '--inactive-days <n>',
      'days without activity (DREACT_RETENTION_DAYS is a good cron value)',
      (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of days ≥ 0');
        return n;
      },
    )
    .option('--dry-run', 'list what would be purged')
    .action((o: { inactiveDays: number; dryRun?: boolean }) =>
      withSession(async (s) => {
        const { collectGarbage } = require('../../client/gc') as typeof import('../../client/gc');
        const { candidates, purged } = await collectGarbage(s.temporal, s.db, {
          inactiveDays: o.inactiveDays,
          dryRun: o.dryRun,
          taskQueue: s.api.opts.taskQueue,
        });
        if (o.dryRun) {
          for (const c of candidates) console.log(c);
          console.log(`${candidates.length} conversation(s) would be purged`);
          return;
        }
        for (const p of purged) {
          const rows = Object.values(p.removed).reduce((a, b) => a + b, 0);
          console.log(`${p.conversationId}: ${rows} rows removed${p.cancelled ? ' (its workflow was stopped)' : ''}`);
        }
        console.log(`${purged.length} conversation(s) purged`);
      }),
    );
}
