/**
 * Background subagents (docs/agents.md "Background subagents"): `agent.delegate` with `wait: false`
 * (or an agent whose `background.delegate` is true) starts the subagent and returns a RECEIPT as the
 * call's observation at once; the delegating turn goes on and ends normally. The subagent's turn runs
 * under a BackgroundTaskWorkflow (`conv/<parent>/task/<callId>`, workflows/background-task.ts), a child
 * of the delegating turn with ParentClosePolicy ABANDON, so it outlives that turn. When it ends, its
 * answer (and its files, by reference) is delivered by `on_result`:
 *
 * - `followup` (default): a followup of the parent conversation (message id `bgtask-<callId>`, which
 *   the conversation dedupes: one delivery whatever retries), folded into the running turn or
 *   starting the next turn when none runs;
 * - `record`: kept on the task only (`agent.tasks` shows its answer); no turn starts.
 *
 * Pure and zod-free: the workflows import the ids.
 */
import { preview } from '../turn/ids';

export const TASKS_TOOL_ID = 'agent.tasks';
export const CANCEL_TOOL_ID = 'agent.cancel';

export const ON_RESULT_MODES = ['followup', 'record'] as const;
export type OnResult = (typeof ON_RESULT_MODES)[number];

export type TaskStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** A background task's id, from the delegate call's id (unique in its conversation). */
export function backgroundTaskId(callId: string): string {
  return `task-${callId}`;
}

/** The workflow id of a background task: `conv/<parent>/task/<callId>`. */
export function backgroundTaskWorkflowId(parentConversationId: string, callId: string): string {
  return `conv/${parentConversationId}/task/${callId}`;
}

/** The followup's message id: the conversation workflow remembers it, so a retried delivery is dropped. */
export function taskResultMessageId(callId: string): string {
  return `bgtask-${callId}`;
}

/** Whether a delegate call runs in the background: the call's `wait` decides, else the agent's setting. */
export function runsInBackground(wait: boolean | undefined, agentDefault: boolean | undefined): boolean {
  return wait === undefined ? agentDefault === true : !wait;
}

/** The readable summary of a background task in Temporal UI. */
export function backgroundTaskSummary(agent: string, task: string): string {
  return `background subagent ${agent}: ${preview(task, 110)}`;
}

export interface TaskReceipt {
  taskId: string;
  agent: string;
  conversationId: string;
  onResult: OnResult;
}

/** The delegate call's observation for a background task. */
export function receiptText(r: TaskReceipt): string {
  const delivery =
    r.onResult === 'followup'
      ? 'Its answer arrives in this conversation as a followup when it finishes (a new turn if none is running).'
      : 'Its answer is kept on the task: read it with agent.tasks.';
  return `Started background task ${r.taskId}: subagent ${r.agent} works in conversation ${r.conversationId}. ${delivery} agent.tasks lists your tasks; agent.cancel({ task_id: "${r.taskId}" }) cancels it.`;
}

/** The followup that delivers a finished task's report (its answer or failure, with its files). */
export function taskResultText(taskId: string, agent: string, status: TaskStatus, report: string): string {
  const head =
    status === 'completed'
      ? `[BACKGROUND TASK] ${taskId} (subagent ${agent}) finished:`
      : `[BACKGROUND TASK] ${taskId} (subagent ${agent}) ${status}:`;
  return `${head}\n\n${report}`;
}
