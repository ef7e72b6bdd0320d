/**
 * The turn's side of human approval (issue 30, docs/governance.md). A call whose plan carries
 * `approval` (decided by the round that planned it, so it is in history) waits here — durably, in
 * the workflow: no activity, no worker slot, no polling — for the `decideToolCall` Update, sent
 * straight to this turn workflow:
 *
 * - the request: an activity appends the approval-request block (tool, params, the model's stated
 *   reason) and publishes the `approval` stream event; `TurnStatus` becomes `awaiting_approval`;
 * - the wait: `condition(() => decided.has(callId), timeout)` in the scope a steer cancels (a steer
 *   ends the wait and the turn finalizes; the call gets the synthetic "cancelled" result);
 * - approve runs the call; edit runs it with the person's params (the tool activity validates them
 *   like any params); deny — or the timeout, by default — records "denied by <user>: <reason>" as
 *   the call's observation, so every tool_use still has its tool_result; `on_timeout: fail` fails
 *   the turn.
 *
 * The Update (registered with the turn's other handlers, workflows/turn/run.ts) validates first: it
 * rejects an unknown or already decided call, a malformed edit and a principal without the
 * `approve` scope (core/governance/approval.ts), and a rejected Update never reaches history. Calls of one round (concurrent explorations, multi-action) wait and are decided
 * one by one. A subagent's turn waits the same way in its own workflow; the parent lists it through
 * `runningSubagents` (workflows/turn/subagent-step.ts, client/approvals.ts).
 */
import { ApplicationFailure, condition, proxyActivities } from '@temporalio/workflow';
import type { ApprovalActivities } from '../../activities/approval/approval-activities';
import type { TurnActivities } from '../../activities/turn-activities';
import {
  APPROVAL_DENIED,
  APPROVAL_TIMEOUT,
  deniedObservation,
  expiredObservation,
  type ApprovalDecision,
} from '../../core/governance/approval';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import type { ToolCallPlan } from '../../core/tools/call-plan';
import { SHORT_STEP } from './activity-options';
import type { TurnRun } from './run';

const { requestApproval, recordApprovalDecision } = proxyActivities<ApprovalActivities>(SHORT_STEP);
const { recordToolFailure } = proxyActivities<TurnActivities>(SHORT_STEP);

/** What to do with a call after its wait: run it (with edited params), or its observation. */
export type ApprovalGate = { run: true; params?: Record<string, unknown> } | { run: false; outcome: ToolOutcome };

export interface ApprovalStep {
  /** Waits for the decision on a call whose plan asks for approval. */
  gate(call: ToolCallPlan, input: ToolInput): Promise<ApprovalGate>;
}

export function approvalStep(run: TurnRun): ApprovalStep {
  // The decideToolCall Update and the pendingApprovals query read and fill these (workflows/turn/run.ts).
  const { pending, decided } = run.approvals;

  return {
    async gate(call, input) {
      const spec = call.approval!;
      const { callId, toolId } = call;
      const timeoutMs = spec.timeoutSeconds * 1000;
      run.status.approvalWait(+1);
      let decision: ApprovalDecision | undefined;
      try {
        // The request's times come from the activity (recorded in history), not a clock read here.
        const requested = await requestApproval.executeWithOptions(
          { summary: `approval requested: ${call.summary}`.slice(0, 160) },
          [
            {
              conversationId: run.conversationId,
              turnId: run.turnId,
              workflowId: run.workflowId,
              callId,
              toolId,
              summary: call.summary,
              source: spec.source,
              timeoutSeconds: spec.timeoutSeconds,
              onTimeout: spec.onTimeout,
              ...run.withAgent(),
            },
          ],
        );
        // Listed (and decidable) once its request block exists: a client sees the params and schema.
        pending.set(callId, {
          callId,
          toolId,
          summary: call.summary,
          turnId: run.turnId,
          since: requested.requestedAt,
          expiresAt: requested.expiresAt,
          onTimeout: spec.onTimeout,
        });
        // Durable: the workflow sleeps in the server until the Update (or the timer) wakes it.
        const got = await condition(() => decided.has(callId), timeoutMs);
        decision = got ? decided.get(callId)! : undefined;
      } finally {
        pending.delete(callId);
        run.status.approvalWait(-1);
      }
      if (!decision && spec.onTimeout === 'fail') {
        await recordApprovalDecision.executeWithOptions(
          { summary: `approval expired: ${call.summary}`.slice(0, 160) },
          [{ ...input, decision: 'expired', by: 'timeout' }],
        );
        throw ApplicationFailure.nonRetryable(
          `tool call ${callId} (${toolId}) waited ${spec.timeoutSeconds} s for approval; the agent fails the turn on timeout`,
          APPROVAL_TIMEOUT,
        );
      }
      const kind = decision?.decision ?? 'expired';
      await recordApprovalDecision.executeWithOptions(
        { summary: `approval ${kind}${decision ? ` by ${decision.by}` : ''}: ${call.summary}`.slice(0, 160) },
        [
          {
            ...input,
            decision: kind,
            by: decision?.by ?? 'timeout',
            ...(decision?.reason ? { reason: decision.reason } : {}),
            ...(decision?.params ? { params: decision.params } : {}),
          },
        ],
      );
      if (decision && decision.decision !== 'deny')
        return { run: true, ...(decision.params ? { params: decision.params } : {}) };
      const outcome = await recordToolFailure.executeWithOptions(
        { summary: `record denial: ${call.summary}`.slice(0, 160) },
        [
          {
            ...input,
            error: decision ? deniedObservation(decision) : expiredObservation(spec.timeoutSeconds),
            failureType: APPROVAL_DENIED,
          },
        ],
      );
      return { run: false, outcome };
    },
  };
}
