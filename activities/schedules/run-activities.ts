/**
 * The activities of a schedule run (workflows/scheduled-turn.ts): begin (caps, the conversation,
 * the turn — started through DreactClient like any client's, with a message id derived from the
 * run's workflow id so a retry never starts a second turn), wait for the turn (heartbeating), and
 * record how it ended. Each is idempotent by the run's workflow id.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { Pool } from 'pg';
import { DreactClient, DreactError } from '../../client/api';
import { claimConversation } from '../../store/tenancy-store';
import { listRuns, recordRunEnd, recordRunStart } from '../../store/schedules/run-store';
import { runConversationId, runMessageId, type ScheduledRunInput } from '../../core/schedules/run';
import { turnIdFor } from '../../core/turn/ids';
import type { RunOutcome } from '../../core/schedules/spec';
import { capRefusal } from './caps';

export type BegunRun =
  | { refused: true; reason: string; conversationId: string }
  | { refused: false; conversationId: string; turnIndex: number; workflowId: string };

/** How the run's turn ended: ids and the outcome only (its answer stays in the turn; the webhook delivery reads it). */
export interface TurnEnd {
  outcome: 'completed' | 'failed' | 'cancelled';
  completionPath?: string;
}

const sameOwner = (a: ScheduledRunInput['owner'], b: ScheduledRunInput['owner']) =>
  a.tenantId === b.tenantId && a.projectId === b.projectId && (a.userId ?? null) === (b.userId ?? null);

/** The workflow id of the run an activity works for (its idempotency key). */
export function runWorkflowIdOf(): string {
  const id = Context.current().info.workflowExecution?.workflowId;
  if (id === undefined) throw ApplicationFailure.nonRetryable('a schedule activity runs inside a schedule run only');
  return id;
}

/** The runtime's client over the worker's own Temporal connection. */
export function dreact(): DreactClient {
  const ctx = Context.current();
  return new DreactClient(ctx.client, { taskQueue: ctx.info.taskQueue });
}

export function makeScheduleRunActivities(pool: Pool) {
  return {
    async beginScheduledRun(input: ScheduledRunInput): Promise<BegunRun> {
      const runWorkflowId = runWorkflowIdOf();
      const conversationId = runConversationId(input, runWorkflowId);
      const earlier = (await listRuns(pool, input.scheduleId, 50)).find((r) => r.runWorkflowId === runWorkflowId);
      if (earlier?.outcome === 'refused') return { refused: true, reason: earlier.refusedReason ?? '', conversationId };
      if (!earlier) {
        const reason = await capRefusal(pool, input, conversationId);
        if (reason !== undefined) {
          await recordRunStart(pool, {
            runWorkflowId,
            scheduleId: input.scheduleId,
            conversationId,
            outcome: 'refused',
            refusedReason: reason,
          });
          return { refused: true, reason, conversationId };
        }
      }
      const owner = await claimConversation(pool, conversationId, input.owner);
      if (!sameOwner(owner, input.owner))
        throw ApplicationFailure.nonRetryable(`conversation ${conversationId} belongs to another owner`, 'NotOwner');
      let started;
      try {
        started = await dreact().startTurn(
          conversationId,
          input.prompt,
          {},
          runMessageId(runWorkflowId),
          undefined,
          { tenantId: input.owner.tenantId, projectId: input.owner.projectId },
          input.agent,
          { scheduleId: input.scheduleId },
        );
      } catch (err) {
        // A conversation bound to another agent, a bad prompt: this run can never start its turn.
        if (err instanceof DreactError) throw ApplicationFailure.nonRetryable(err.message, `Dreact_${err.code}`);
        throw err;
      }
      await recordRunStart(pool, {
        runWorkflowId,
        scheduleId: input.scheduleId,
        conversationId,
        turnIndex: started.turnIndex,
        turnId: turnIdFor(started.turnIndex),
        outcome: 'running',
      });
      return { refused: false, conversationId, turnIndex: started.turnIndex, workflowId: started.workflowId };
    },

    /** Waits for the run's turn to end, heartbeating; a cancel of the run cancels the wait. */
    async awaitScheduledTurn(args: { conversationId: string; turnIndex: number }): Promise<TurnEnd> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 1_000);
      try {
        let result;
        try {
          result = await Promise.race([dreact().result(args.conversationId, args.turnIndex), ctx.cancelled]);
        } catch (err) {
          // The turn workflow failed (it is not retried): the run records a failed turn.
          if (err instanceof WorkflowFailedError) return { outcome: 'failed' };
          throw err;
        }
        const outcome: TurnEnd['outcome'] = result.cancelled
          ? 'cancelled'
          : result.completionPath === 'decision_failure'
            ? 'failed'
            : 'completed';
        return { outcome, completionPath: result.completionPath };
      } finally {
        clearInterval(beat);
      }
    },

    async finishScheduledRun(args: { outcome: Exclude<RunOutcome, 'running' | 'refused'>; completionPath?: string }) {
      const runWorkflowId = runWorkflowIdOf();
      await recordRunEnd(pool, runWorkflowId, args);
    },
  };
}

export type ScheduleRunActivities = ReturnType<typeof makeScheduleRunActivities>;
