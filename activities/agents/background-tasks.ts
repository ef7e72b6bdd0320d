/**
 * Background subagents on the worker (core/agents/background.ts, workflows/background-task.ts):
 *
 * - `deliverBackgroundTask` (activity, once the task's subagent turn ended): its answer — or its
 *   failure — with its files by reference, as a followup of the parent conversation (`on_result:
 *   followup`), then the task row closed and marked delivered. The followup's message id is the
 *   task's (`bgtask-<callId>`) and the conversation workflow drops one it has seen: a retry after a
 *   worker died between the signal and the row's update delivers nothing twice. A cancelled task, and
 *   one whose agent says `on_result: record`, is recorded on its row only.
 * - `agent.tasks` lists the conversation's tasks (Postgres), `agent.cancel` asks Temporal to cancel
 *   one's workflow, which forwards a turn cancel to its subagent (workflows/background-task.ts).
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from '../deps';
import type { ToolImpl, ToolObservation } from '../tools/types';
import { followupSignal } from '../../contract/definitions';
import { conversationWorkflowId, MAX_EVENT_CHARS, preview } from '../../core/turn/ids';
import {
  CANCEL_TOOL_ID,
  TASKS_TOOL_ID,
  taskResultMessageId,
  taskResultText,
  type TaskStatus,
} from '../../core/agents/background';
import {
  AgentCancelParamsSchema,
  AgentTasksParamsSchema,
  agentCancel,
  agentTasks,
} from '../../core/tools/agent-task-tools';
import { subagentOutcome } from '../../store/subagent-store';
import {
  finishBackgroundTask,
  listBackgroundTasks,
  loadBackgroundTask,
  markBackgroundTaskDelivered,
  type BackgroundTask,
} from '../../store/background-task-store';
import { childFiles } from './delegate';
import { cancelTask, TaskCancelError } from '../../client/background-tasks';

export interface DeliverTaskInput {
  parentConversationId: string;
  taskId: string;
  /** The task's workflow saw a cancel (agent.cancel): nothing is delivered unless its turn completed anyway. */
  cancelled: boolean;
  /** A remote A2A agent's task (activities/agents/a2a-background.ts): how it ended, instead of a turn's row. */
  remote?: { status: Exclude<TaskStatus, 'running'>; answer: string | null; error: string | null };
}

export function makeBackgroundTaskActivities(deps: ActivityDeps) {
  const pool = deps.db.pool;
  return {
    async deliverBackgroundTask(input: DeliverTaskInput): Promise<{ status: TaskStatus; delivered: boolean }> {
      const task = await loadBackgroundTask(pool, input.parentConversationId, input.taskId);
      if (!task) throw new Error(`deliverBackgroundTask: no task ${input.taskId} in ${input.parentConversationId}`);
      const outcome = input.remote
        ? remoteOutcome(input.remote)
        : await subagentOutcome(pool, task.childConversationId);
      const status: Exclude<TaskStatus, 'running'> =
        outcome?.completionPath === 'cancelled' || (input.cancelled && outcome?.status !== 'completed')
          ? 'cancelled'
          : outcome?.status === 'completed'
            ? 'completed'
            : 'failed';
      const error = status === 'failed' ? (outcome?.error ?? 'the subagent did not finish its turn') : null;
      const { listing } = await childFiles(pool, task.childConversationId);
      const report = status === 'failed' ? `The subagent failed: ${error}` : `${outcome?.answer ?? ''}${listing}`;
      const deliver = status !== 'cancelled' && task.onResult === 'followup' && task.deliveredAt === null;
      if (deliver) {
        const text = taskResultText(task.taskId, task.agent, status, report).slice(0, MAX_EVENT_CHARS);
        try {
          await Context.current()
            .client.workflow.getHandle(conversationWorkflowId(task.conversationId))
            .signal(followupSignal, { kind: 'followup', messageId: taskResultMessageId(task.callId), text });
        } catch (err) {
          // A conversation that is gone (deleted) gets nothing; its task is recorded as it ended.
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
      await finishBackgroundTask(pool, task.conversationId, task.taskId, {
        status,
        answer: status === 'completed' ? (outcome?.answer ?? '') : null,
        error,
      });
      if (deliver) await markBackgroundTaskDelivered(pool, task.conversationId, task.taskId);
      return { status, delivered: deliver };
    },
  };
}

/** A remote task's end in the shape of a subagent turn's outcome. */
const remoteOutcome = (r: NonNullable<DeliverTaskInput['remote']>) => ({
  status: r.status === 'cancelled' ? 'failed' : r.status,
  completionPath: r.status === 'cancelled' ? 'cancelled' : undefined,
  answer: r.answer,
  error: r.error,
});

const taskLine = (t: BackgroundTask) =>
  `- ${t.taskId}: subagent ${t.agent}, ${t.status}${t.deliveredAt ? ', delivered' : ''} — task: ${preview(t.task, 120)}` +
  (t.answer ? `\n  answer: ${preview(t.answer, 300)}` : '') +
  (t.error ? `\n  error: ${preview(t.error, 300)}` : '');

/** agent.tasks and agent.cancel; `bind(deps)` once the worker's deps exist. */
export function createTaskTools() {
  let bound: ActivityDeps | undefined;
  const pool = () => {
    if (!bound) throw new Error('agent.tasks: the worker did not bind its deps');
    return bound.db.pool;
  };
  const tasks: ToolImpl = {
    id: TASKS_TOOL_ID,
    async run(params, ctx): Promise<ToolObservation> {
      const p = AgentTasksParamsSchema.parse(params);
      const list = await listBackgroundTasks(pool(), ctx.conversationId, p.status ? { status: p.status } : {});
      return {
        ok: true,
        text: list.length ? `Background tasks:\n${list.map(taskLine).join('\n')}` : 'No background tasks.',
        meta: { tasks: list.map((t) => ({ task_id: t.taskId, agent: t.agent, status: t.status })) },
      };
    },
  };
  const cancel: ToolImpl = {
    id: CANCEL_TOOL_ID,
    async run(params, ctx): Promise<ToolObservation> {
      const p = AgentCancelParamsSchema.parse(params);
      let task: BackgroundTask;
      try {
        task = await cancelTask(Context.current().client, pool(), ctx.conversationId, p.task_id);
      } catch (err) {
        if (err instanceof TaskCancelError) return { ok: false, text: err.message };
        throw err;
      }
      return {
        ok: true,
        text: `Cancelling background task ${task.taskId} (subagent ${task.agent}): it stops where it is and delivers no answer.`,
        meta: { background_task: { task_id: task.taskId, workflow_id: task.workflowId, cancelled: true } },
      };
    },
  };
  return {
    tools: [
      { declaration: agentTasks, impl: tasks },
      { declaration: agentCancel, impl: cancel },
    ],
    bind(deps: ActivityDeps) {
      bound = deps;
    },
  };
}
