/**
 * Background tasks over HTTP (docs/agents.md "Background subagents"; client/background-tasks.ts):
 *
 * - `GET  /v1/conversations/:id/tasks[?status=running|completed|failed|cancelled]` — the tasks the
 *   conversation's `agent.delegate` calls started in the background, oldest first; `read` scope;
 * - `POST /v1/conversations/:id/tasks/:taskId/cancel` — cancels a running one (as `agent.cancel`
 *   does: its subagent's turn ends `cancelled`, nothing is delivered); `write` scope. An unknown
 *   task is a 404, one that already ended a 409.
 *
 * Another tenant's conversation looks absent (404), as everywhere.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError, type DreactClient } from '../../client/api';
import { cancelTask, listTasks, TaskCancelError, taskView } from '../../client/background-tasks';
import { conversationId, need, ownedConversation, shownId, zodMessage, type GatewayEnv } from './http';

const TasksQuerySchema = z.strictObject({
  status: z.enum(['running', 'completed', 'failed', 'cancelled']).optional(),
});
const TASK_ID_RE = /^[A-Za-z0-9_.:-]{1,200}$/;

export function registerTaskRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  app.get('/v1/conversations/:id/tasks', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const parsed = TasksQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
    const tasks = (await listTasks(pool, id, parsed.data)).map((t) => ({
      ...t,
      childConversationId: shownId(c, t.childConversationId),
    }));
    return c.json({ conversationId: shownId(c, id), tasks });
  });

  app.post('/v1/conversations/:id/tasks/:taskId/cancel', async (c) => {
    const principal = need(c, 'write');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const taskId = c.req.param('taskId');
    if (!TASK_ID_RE.test(taskId))
      throw new DreactError(`task id ${JSON.stringify(taskId)} is not a task id`, 'bad_input');
    try {
      const task = taskView(await cancelTask(client.temporal, pool, id, taskId));
      return c.json({
        conversationId: shownId(c, id),
        cancelled: { ...task, childConversationId: shownId(c, task.childConversationId) },
      });
    } catch (err) {
      if (err instanceof TaskCancelError) throw new DreactError(err.message, err.code);
      throw err;
    }
  });
}
