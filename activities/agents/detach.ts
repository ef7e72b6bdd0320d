/**
 * A steer with `detach: true` turns the parent turn's running WAITED delegate calls into background
 * tasks (docs/agents.md "Detaching a waited delegate"; workflows/turn/subagent-step.ts):
 *
 * - `detachDelegation` (activity, run by the parent turn when the steer arrives): opens the call's
 *   `background_tasks` row (task `task-<callId>`, on_result `followup`), so the call's result becomes
 *   the receipt (activities/agents/delegate.ts reads the row) and agent.tasks lists it. Idempotent.
 * - `awaitSubagentTurn` (activity, run by the adopting BackgroundTaskWorkflow): waits, heartbeating,
 *   for the subagent's turn — already running, not its child — to close, through the Temporal client.
 *   Its outcome is then read from its turns row by the delivery, as for a background task.
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { backgroundTaskId, backgroundTaskWorkflowId } from '../../core/agents/background';
import { openBackgroundTask } from '../../store/background-task-store';

export interface DetachInput {
  conversationId: string;
  turnId: string;
  callId: string;
  agent: string;
  task: string;
  childConversationId: string;
}

export function makeDetachActivities(pool: Pool) {
  return {
    async detachDelegation(input: DetachInput): Promise<{ taskId: string; workflowId: string }> {
      const taskId = backgroundTaskId(input.callId);
      const workflowId = backgroundTaskWorkflowId(input.conversationId, input.callId);
      await openBackgroundTask(pool, { ...input, taskId, workflowId, onResult: 'followup' });
      return { taskId, workflowId };
    },

    async awaitSubagentTurn(input: { workflowId: string }): Promise<{ closed: boolean }> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2_000);
      try {
        // The activity's cancellation ends the wait (the child goes on; the task's cancel is its own).
        await Promise.race([ctx.client.workflow.getHandle(input.workflowId).result(), ctx.cancelled]);
      } catch (err) {
        // A failed or cancelled turn is an outcome too (its turns row says which); anything else retries.
        const name = (err as Error).name;
        if (name !== 'WorkflowFailedError') throw err;
      } finally {
        clearInterval(beat);
      }
      return { closed: true };
    },
  };
}
