/**
 * `dreact inspect <conversation> --turn N --round R [--json]`: the request round R of turn N sent
 * to the model, rebuilt on a worker (InspectRoundWorkflow, activities/evals/inspect.ts).
 * The call itself is client/inspect.ts (the gateway's inspect route uses it too).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { inspectText } from '../../core/evals/inspect';
import { inspectRoundRequest } from '../../client/inspect';
import { withSession } from './with-session';

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description(
      'the exact request a round sent to the model (system, tools, timeline with checkpoints, SOURCES POOL, ANNOUNCE)',
    )
    .argument('<conversationId>')
    .requiredOption('--turn <n>', 'turn index', int)
    .requiredOption('--round <r>', 'round of the turn', int)
    .option('--json', 'the request as JSON')
    .action((conversationId: string, o: { turn: number; round: number; json?: boolean }) =>
      withSession(async (s) => {
        const r = await inspectRoundRequest(
          s.temporal,
          { conversationId, turnIndex: o.turn, round: o.round },
          s.api.opts.taskQueue,
        );
        console.log(o.json ? JSON.stringify(r, null, 2) : inspectText(r));
      }),
    );
}
