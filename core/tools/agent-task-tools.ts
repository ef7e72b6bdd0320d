/**
 * Declarations of `agent.tasks` and `agent.cancel`: the background tasks a conversation's delegate
 * calls started (core/agents/background.ts). Offered with agent.delegate. Both run in the shared
 * tool activity; agent.tasks reads Postgres, agent.cancel asks Temporal to cancel the task's workflow
 * (its subagent turn is cancelled like a user's cancel: it closes its timeline, its spend stays counted).
 */
import { z } from 'zod';
import { declareTool } from './registry';
import { CANCEL_TOOL_ID, TASKS_TOOL_ID } from '../agents/background';

export const AgentTasksParamsSchema = z.strictObject({
  status: z
    .enum(['running', 'completed', 'failed', 'cancelled'])
    .optional()
    .describe('Only the tasks with this status (default: all).'),
});
export type AgentTasksParams = z.output<typeof AgentTasksParamsSchema>;

export const AgentCancelParamsSchema = z.strictObject({
  task_id: z
    .string()
    .min(1)
    .max(200)
    .describe('The task id from the receipt of agent.delegate with wait: false (see agent.tasks).'),
});
export type AgentCancelParams = z.output<typeof AgentCancelParamsSchema>;

export const agentTasks = declareTool({
  id: TASKS_TOOL_ID,
  description:
    'List the background tasks (agent.delegate with wait: false) of this conversation: id, subagent, status and, once finished, a preview of the answer.',
  params: AgentTasksParamsSchema,
  strategy: 'exploration',
  timeoutMs: 15_000,
  retry: { maximumAttempts: 3, initialInterval: 500 },
  summarize: (p: AgentTasksParams) => `background tasks${p.status ? ` (${p.status})` : ''}`,
});

export const agentCancel = declareTool({
  id: CANCEL_TOOL_ID,
  description:
    'Cancel a running background task of this conversation: its subagent stops where it is and no answer is delivered.',
  params: AgentCancelParamsSchema,
  strategy: 'neutral',
  bundleSafe: false,
  timeoutMs: 15_000,
  retry: { maximumAttempts: 3, initialInterval: 500 },
  summarize: (p: AgentCancelParams) => `cancel background task ${p.task_id}`,
});
