/**
 * `dreact fork <conversation> --at-turn N [--id <new id>] [--agent X] [--prompt "…"]`: a new
 * conversation whose timeline is the original's up to turn N — its blocks shared by reference
 * (store/fork-store.ts), none copied — so a case can be re-run from the moment it went wrong with
 * another agent or model. The fork's ConversationWorkflow starts at turn N + 1; with `--prompt` its
 * first turn starts at once (under `--agent`, else `default`).
 *
 * `forkConversationAt` is the command without the printing (tests and other callers).
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { conversationWorkflowId, TASK_QUEUE } from '../../core/turn/ids';
import { AgentNameKey, ConversationIdKey, ProjectIdKey, TenantIdKey } from '../../contract/definitions';
import { forkConversation, type ForkRow } from '../../store/fork-store';
import { conversationOwner } from '../../store/tenancy-store';
import type { StartedTurn } from '../../client/api';
import { DreactError } from '../../client/errors';
import { withSession } from './with-session';

export async function forkConversationAt(
  temporal: Client,
  pool: Pool,
  f: { source: string; upToTurn: number; target?: string; agent?: string; taskQueue?: string },
): Promise<ForkRow> {
  const target = f.target ?? `${f.source}.fork-${randomBytes(3).toString('hex')}`;
  let fork: ForkRow;
  try {
    fork = await forkConversation(pool, { source: f.source, target, upToTurn: f.upToTurn });
  } catch (err) {
    throw new DreactError(
      (err as Error).message,
      /unknown|has no turn/.test((err as Error).message) ? 'not_found' : 'conflict',
    );
  }
  const owner = (await conversationOwner(pool, target))!;
  await temporal.workflow.start('ConversationWorkflow', {
    workflowId: conversationWorkflowId(target),
    taskQueue: f.taskQueue ?? TASK_QUEUE,
    // The fork's agent is bound here: the conversation has turns already, so its first turn would not bind it.
    args: [
      {
        conversationId: target,
        nextTurnIndex: f.upToTurn + 1,
        completedTurns: f.upToTurn,
        queue: [],
        seenMessages: [],
        ...(f.agent !== undefined ? { agent: f.agent } : {}),
      },
    ],
    staticSummary: `conversation ${target} (fork of ${f.source} at turn ${f.upToTurn})`,
    typedSearchAttributes: [
      { key: ConversationIdKey, value: target },
      { key: TenantIdKey, value: owner.tenantId },
      { key: ProjectIdKey, value: owner.projectId },
      { key: AgentNameKey, value: f.agent ?? 'default' },
    ],
    priority: { fairnessKey: owner.tenantId },
  });
  return fork;
}

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

export function registerForkCommand(program: Command): void {
  program
    .command('fork')
    .description("a new conversation whose timeline is another's up to a turn (shared, not copied)")
    .argument('<conversationId>')
    .requiredOption('--at-turn <n>', 'the last turn of the original the fork keeps', int)
    .option('--id <conversationId>', 'the new conversation id (default <original>.fork-<hex>)')
    .option('--agent <name>', "the fork's agent (its first turn's)")
    .option('--prompt <text>', "start the fork's first turn with this prompt")
    .action((source: string, o: { atTurn: number; id?: string; agent?: string; prompt?: string }) =>
      withSession(async (s) => {
        const fork = await forkConversationAt(s.temporal, s.db.pool, {
          source,
          upToTurn: o.atTurn,
          ...(o.id ? { target: o.id } : {}),
          ...(o.agent ? { agent: o.agent } : {}),
          ...(s.api.opts.taskQueue ? { taskQueue: s.api.opts.taskQueue } : {}),
        });
        console.log(`${fork.conversationId}  (fork of ${source} at turn ${o.atTurn})`);
        if (o.prompt) {
          const { DreactClient } = require('../../client/api') as typeof import('../../client/api');
          const api = new DreactClient(s.temporal, s.api.opts);
          const started: StartedTurn = await api.startTurn(
            fork.conversationId,
            o.prompt,
            {},
            undefined,
            undefined,
            undefined,
            o.agent,
          );
          const result = await api.result(fork.conversationId, started.turnIndex);
          console.log(result.answer);
        }
      }),
    );
}
