/**
 * The turn's side of agent.delegate (core/agents/subagents.ts): a call whose plan says `child`
 * (core/tools/call-plan.ts) runs another agent's turn as a CHILD WORKFLOW — a TurnWorkflow on the
 * child conversation `<parent>:sub:<callId>`, workflow id `conv/<parent>/sub/<callId>` — between
 * two activities: `prepareDelegation` (checks, opens the child conversation; nothing to start when
 * refused or answered already) and the tool activity that appends the child's answer as the call's
 * result. The ids follow from the call id: a replay or a worker killed mid-child finds the same
 * child, and nothing runs twice.
 *
 * The child runs in a scope the parent's steer does not cancel: a steer is FORWARDED to the child
 * (its own finalize round answers), so the call still gets an answer and the parent then finalizes;
 * a cancel of the parent turn is forwarded as a cancel; a cancellation of the parent workflow
 * cancels the child (and its parent-close policy does too).
 * The child's model usage (its compactions and own subagents included) rolls up into `usage`.
 *
 * The `runningSubagents` query (workflows/turn/run.ts) lists the children running now, so a client can reach a child's
 * waiting calls from the parent (client/approvals.ts: a subagent's approval surfaces in the parent
 * conversation and is decided there). A query handler adds nothing to history.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ScheduledChildCall } from '../../core/tools/call-plan';
import type { Usage } from '../../core/turn/contracts';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import type { TurnWorkflow } from '../../contract/workflows';
import { addUsage, ZERO_USAGE } from '../../core/model/provider';
import { subagentSummary } from '../../core/agents/subagents';
import { turnIdFor } from '../../core/turn/ids';
import type { DelegationStart } from '../../activities/agents/delegate';
import type { TurnRun } from './run';
import {
  AgentNameKey,
  ConversationIdKey,
  ProjectIdKey,
  SHORT_WORKFLOW_TASK_TIMEOUT,
  cancelSignal,
  steerSignal,
  TenantIdKey,
  TurnIndexKey,
  TurnStatusKey,
} from '../../contract/definitions';

// Each call passes the plan's options; these are the fallbacks.
const prepareActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<DelegationStart>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});
const toolActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

export interface SubagentStep {
  /** Runs one delegate call: prepare, the child turn, its answer as the call's result. */
  run(input: ToolInput, scheduled: ScheduledChildCall): Promise<ToolOutcome>;
  /** Subagent turns run, and their usage. */
  readonly count: number;
  readonly usage: Usage;
}

export function subagentStep(run: TurnRun): SubagentStep {
  // prepare and the answer's append are tool activities, on the tools role's queue.
  const { roles } = run;
  let count = 0;
  let usage = ZERO_USAGE;
  // The runningSubagents query lists these (workflows/turn/run.ts).
  const running = run.subagents;

  const runCall = async (input: ToolInput, scheduled: ScheduledChildCall): Promise<ToolOutcome> => {
    const outer = CancellationScope.current();
    return CancellationScope.nonCancellable(async () => {
      const prepared = await roles.run('tools', undefined, (placed) =>
        prepareActivities[scheduled.prepare.activity]!.executeWithOptions({ ...scheduled.prepare.options, ...placed }, [
          input,
        ]),
      );
      const start = prepared.start;
      if (start) {
        const owner = workflowInfo().typedSearchAttributes;
        const tenant = owner.get(TenantIdKey);
        const project = owner.get(ProjectIdKey);
        const child = await startChild<TurnWorkflow>('TurnWorkflow', {
          workflowId: start.workflowId,
          args: [
            {
              conversationId: start.conversationId,
              turnIndex: 1,
              turnId: turnIdFor(1),
              prompt: { text: start.task, messageId: `delegate-${input.callId}` },
              options: {},
              agent: { name: start.agent },
            },
          ],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
          workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
          staticSummary: subagentSummary(start.agent, start.task),
          typedSearchAttributes: [
            { key: ConversationIdKey, value: start.conversationId },
            { key: TurnIndexKey, value: 1 },
            { key: TurnStatusKey, value: 'running' },
            { key: AgentNameKey, value: start.agent },
            ...(tenant !== undefined ? [{ key: TenantIdKey, value: tenant }] : []),
            ...(project !== undefined ? [{ key: ProjectIdKey, value: project }] : []),
          ],
        });
        count += 1;
        running.set(input.callId, {
          callId: input.callId,
          agent: start.agent,
          workflowId: start.workflowId,
          conversationId: start.conversationId,
        });
        // The parent's steer or cancellation reaches the child.
        let cancelled = false;
        outer.cancelRequested.catch(() => {
          // A cancel is forwarded as a cancel: the child closes its own timeline, answers, and
          // the parent stops at its next step (workflows/turn/run.ts).
          const cancel = run.cancelRequest;
          const steer = cancel ? undefined : run.steerEvent();
          const handle = getExternalWorkflowHandle(start.workflowId);
          cancelled = steer === undefined && cancel === undefined;
          const sent = cancel
            ? handle.signal(cancelSignal, cancel)
            : steer
              ? handle.signal(steerSignal, { kind: 'steer', messageId: steer.messageId, text: steer.text })
              : handle.cancel();
          sent.catch((err: unknown) =>
            log.warn('could not reach the subagent', { workflowId: start.workflowId, error: String(err) }),
          );
        });
        try {
          const result = await child.result();
          usage = addUsage(usage, result.usage);
          if (result.compactionUsage) usage = addUsage(usage, result.compactionUsage);
          if (result.subagentUsage) usage = addUsage(usage, result.subagentUsage);
        } catch (err) {
          // Cancelled with the parent: the cancellation propagates. A failed child is the call's
          // observation (the tool activity reads its failure from its turns row).
          if (cancelled) throw err;
          log.warn('subagent turn failed', { workflowId: start.workflowId, error: String(err) });
        } finally {
          running.delete(input.callId);
        }
      }
      return roles.run('tools', undefined, (placed) =>
        toolActivities[scheduled.activity]!.executeWithOptions({ ...scheduled.options, ...placed }, [input]),
      );
    });
  };

  return {
    run: runCall,
    get count() {
      return count;
    },
    get usage() {
      return usage;
    },
  };
}
