/**
 * `dreact approvals <conversationId>` — the tool calls the conversation's running turn waits on;
 * `dreact approve <conversationId> <callId> [--deny] [--reason TEXT] [--params JSON]` — a decision
 * (approve; deny with a reason; approve with edited params, checked against the tool's schema).
 * The CLI decides as the local operator (the stack it reaches; user = $USER).
 */
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';
import { LOCAL_PRINCIPAL } from '../../core/tenancy/principal';
import { withSession } from './with-session';

// The client API loads when a command runs (it brings Temporal's client).
const DreactClientClass = () => (require('../../client/api') as typeof import('../../client/api')).DreactClient;

const operator = () => ({ ...LOCAL_PRINCIPAL, userId: process.env.USER || 'local' });

export function registerApprovalCommands(program: Command): void {
  program
    .command('approvals')
    .description('tool calls of the running turn that wait for a person (approve with `dreact approve`)')
    .argument('<conversationId>')
    .option('--json', 'as JSON')
    .action((conv: string, o: { json?: boolean }) =>
      withSession(async (s) => {
        const api = new (DreactClientClass())(s.temporal, { db: s.db.pool });
        const items = await api.approvals(conv);
        if (o.json) return void console.log(JSON.stringify(items, null, 2));
        if (items.length === 0) return void console.log(`no tool call of ${conv} waits for approval`);
        for (const a of items) {
          console.log(`${a.callId}  ${a.toolId}  (${a.turnId}, until ${a.expiresAt}, then ${a.onTimeout})`);
          if (a.subagent)
            console.log(`  in subagent ${a.subagent.agent} (the delegate call ${a.subagent.delegateCallId})`);
          if (a.reason) console.log(`  reason: ${a.reason}`);
          console.log(
            `  params: ${JSON.stringify(a.params ?? {}, null, 2)
              .split('\n')
              .join('\n  ')}`,
          );
        }
      }),
    );

  program
    .command('approve')
    .description(
      'approve a waiting tool call (or --deny it, or approve it with --params), as the local operator; over the gateway the key needs the approve or admin scope',
    )
    .argument('<conversationId>')
    .argument('<callId>')
    .option('--deny', 'deny the call (the model sees "denied by <you>: <reason>")')
    .option('--reason <text>', 'why (shown to the model)')
    .option('--params <json>', 'run the call with these params instead (a JSON object)')
    .action((conv: string, callId: string, o: { deny?: boolean; reason?: string; params?: string }) => {
      if (o.deny && o.params) throw new DreactError('--deny and --params exclude each other', 'bad_input');
      let params: Record<string, unknown> | undefined;
      if (o.params !== undefined) {
        try {
          params = JSON.parse(o.params) as Record<string, unknown>;
        } catch (err) {
          throw new DreactError(`--params is not JSON: ${(err as Error).message}`, 'bad_input');
        }
      }
      return withSession(async (s) => {
        const api = new (DreactClientClass())(s.temporal, { db: s.db.pool });
        const decided = await api.decideToolCall(
          conv,
          {
            callId,
            decision: o.deny ? 'deny' : params ? 'edit' : 'approve',
            ...(o.reason ? { reason: o.reason } : {}),
            ...(params ? { params } : {}),
          },
          operator(),
        );
        console.log(
          `${callId}: ${decided.decision === 'deny' ? 'denied' : decided.decision === 'edit' ? 'approved with edited params' : 'approved'} by ${decided.by}`,
        );
      });
    });
}
