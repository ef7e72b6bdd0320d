/**
 * `dreact tasks <conversationId> [--status S] [--json]` — the conversation's background tasks (the
 * `agent.delegate` calls that run in the background), oldest first; `dreact tasks cancel
 * <conversationId> <taskId>` cancels a running one (its subagent's turn ends cancelled, nothing is
 * delivered). An unknown task, or one that already ended, is a clear error (exit code 1).
 */
import type { Command } from 'commander';
import { withSession } from './with-session';
import type { TaskView } from '../../client/background-tasks';

// The client API loads when a command runs (it brings Temporal's client).
const DreactClientClass = () => (require('../../client/api') as typeof import('../../client/api')).DreactClient;

const line = (t: TaskView) =>
  `${t.taskId}  ${t.agent}  ${t.status}${t.deliveredAt ? ', delivered' : ''}  (conversation ${t.childConversationId})\n` +
  `  task: ${t.task}` +
  (t.answer ? `\n  answer: ${t.answer}` : '') +
  (t.error ? `\n  error: ${t.error}` : '');

export function registerTaskCommands(program: Command): void {
  const tasks = program.command('tasks').description('background tasks of a conversation (list; cancel)');
  tasks
    .command('list', { isDefault: true })
    .description('the conversation’s background tasks, oldest first (`dreact tasks <conversationId>`)')
    .argument('<conversationId>')
    .option('--status <status>', 'only tasks with this status (running, completed, failed, cancelled)')
    .option('--json', 'as JSON')
    .action((conv: string, o: { status?: TaskView['status']; json?: boolean }) =>
      withSession(async (s) => {
        const api = new (DreactClientClass())(s.temporal, { db: s.db.pool });
        const list = await api.tasks(conv, o.status ? { status: o.status } : {});
        if (o.json) return void console.log(JSON.stringify(list, null, 2));
        if (list.length === 0) return void console.log(`no background tasks in ${conv}`);
        for (const t of list) console.log(line(t));
      }),
    );
  tasks
    .command('cancel')
    .description('cancel a running background task (its subagent stops; nothing is delivered)')
    .argument('<conversationId>')
    .argument('<taskId>')
    .action((conv: string, taskId: string) =>
      withSession(async (s) => {
        const api = new (DreactClientClass())(s.temporal, { db: s.db.pool });
        const t = await api.cancelTask(conv, taskId);
        console.log(`cancelling ${t.taskId} (subagent ${t.agent}): it stops where it is and delivers no answer`);
      }),
    );
}
