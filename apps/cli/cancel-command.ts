/**
 * `dreact cancel <conversationId> [--turn N] [--reason TEXT] [--no-wait]` — cancels a turn (the
 * running one by default): it stops where it is, closes its timeline and ends `cancelled`; not a
 * steer (client/cancel.ts). The CLI cancels as the local operator (user = $USER) and, unless
 * --no-wait, waits for the turn to end and prints how it ended.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { cancelledBy } from '../../core/turn/cancellation';
import { withSession } from './with-session';

const operator = () => process.env.USER || 'local';

function turnArg(v: string): number {
  if (!/^[1-9][0-9]*$/.test(v)) throw new InvalidArgumentError(`--turn must be a turn index (1 or more), got "${v}"`);
  return Number(v);
}

export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description('cancel a turn (default: the running one): it stops where it is and ends "cancelled" — not a steer')
    .argument('<conversationId>')
    .option('--turn <n>', 'the turn index (default: the running turn)', turnArg)
    .option('--reason <text>', 'why (recorded with "cancelled by <you>")')
    .option('--no-wait', 'return once the turn has the cancel, without waiting for it to end')
    .option('--json', 'print the outcome as JSON')
    .action((conv: string, o: { turn?: number; reason?: string; wait: boolean; json?: boolean }) =>
      withSession(async (s) => {
        const sent = await s.api.cancel(conv, {
          by: operator(),
          ...(o.turn !== undefined ? { turnIndex: o.turn } : {}),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        });
        if (!o.wait) {
          if (o.json) return void console.log(JSON.stringify(sent));
          return void console.log(`cancel sent to turn ${sent.turnIndex} (${sent.workflowId})`);
        }
        const result = await s.api.result(conv, sent.turnIndex);
        const outcome = {
          conversationId: conv,
          turnIndex: sent.turnIndex,
          completionPath: result.completionPath,
          rounds: result.rounds,
          ...(result.cancelled ? { cancelled: result.cancelled } : {}),
        };
        if (o.json) return void console.log(JSON.stringify(outcome));
        console.log(
          result.cancelled
            ? `turn ${sent.turnIndex} ${cancelledBy(result.cancelled)} after ${result.rounds} rounds`
            : `turn ${sent.turnIndex} ended before the cancel took effect (${result.completionPath})`,
        );
      }),
    );
}
