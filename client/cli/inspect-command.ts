/**
 * `dreact inspect <conversation> --turn N --round R [--json]`: the request round R of turn N sent
 * to the model, rebuilt on a worker (InspectRoundWorkflow, activities/evals/inspect.ts).
 * `inspectRoundRequest` is the call without the printing (the gateway's inspect route uses it).
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import { TASK_QUEUE } from '../../core/turn/ids';
import { inspectText, type InspectRoundInput, type InspectedRound } from '../../core/evals/inspect';
import { withSession } from './with-session';

export async function inspectRoundRequest(
  temporal: Client,
  input: InspectRoundInput,
  taskQueue = TASK_QUEUE,
): Promise<InspectedRound> {
  return temporal.workflow.execute<(i: InspectRoundInput) => Promise<InspectedRound>>('InspectRoundWorkflow', {
    taskQueue,
    workflowId: `inspect/${input.conversationId}/${input.turnIndex}/${input.round}/${randomBytes(4).toString('hex')}`,
    args: [input],
    staticSummary: `inspect ${input.conversationId} turn ${input.turnIndex} round ${input.round}`,
  });
}

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
