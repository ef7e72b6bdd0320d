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
 * cancels the child. A steer with `detach: true` instead stops the wait: the call becomes a
 * background task (its result the receipt; the child's answer arrives later as a followup, once).
 * Under the `delegate-detach` patch a waited child starts with ParentClosePolicy ABANDON so it can
 * outlive the turn (before it, REQUEST_CANCEL: a detaching steer is then forwarded as a steer).
 * The child's model usage (its compactions and own subagents included) rolls up into `usage`.
 *
 * The `runningSubagents` query (workflows/turn/run.ts) lists the children running now, so a client can reach a child's
 * waiting calls from the parent (client/approvals.ts: a subagent's approval surfaces in the parent
 * conversation and is decided there). A query handler adds nothing to history.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import type { ScheduledChildCall } from '../../core/tools/call-plan';
import type { Usage } from '../../core/turn/contracts';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import { addUsage, ZERO_USAGE } from '../../core/model/usage';
import { backgroundTaskSummary } from '../../core/agents/background';
import type { DelegationStart } from '../../activities/agents/delegate';
import type { makeDetachActivities } from '../../activities/agents/detach';
import type { makeRemoteTaskActivities } from '../../activities/agents/a2a-background';
import type { BackgroundTaskInput } from '../background-task';
import type { TurnRun } from './run';
import { ownerAttributes, startSubagentTurn, subagentTurnUsage, type SubagentStart } from './subagent-start';
import { ConversationIdKey, cancelSignal, steerSignal } from '../../contract/definitions';

// Each call passes the plan's options; these are the fallbacks.
const prepareActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<DelegationStart>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});
const detachActivities = proxyActivities<ReturnType<typeof makeDetachActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});
const remoteActivities = proxyActivities<ReturnType<typeof makeRemoteTaskActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});
const toolActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

/** The subagent turn a task workflow runs or adopts (or its remote A2A task's call). */
const taskStart = (s: SubagentStart): BackgroundTaskInput['start'] => ({
  agent: s.agent,
  task: s.task,
  conversationId: s.conversationId,
  workflowId: s.workflowId,
  ...(s.remote ? { remote: true } : {}),
});

/**
 * Starts a background call's task workflow (`conv/<parent>/task/<callId>`), abandoned when the turn
 * closes. Under the `background-subagents` patch: recorded only by a turn that ran such a call.
 */
async function startBackgroundTask(start: SubagentStart, input: ToolInput, workflowId: string): Promise<void> {
  await startTaskWorkflow(input, workflowId, {
    parentConversationId: input.conversationId,
    callId: input.callId,
    taskId: start.background!.taskId,
    start: taskStart(start),
  });
}

function startTaskWorkflow(input: ToolInput, workflowId: string, task: BackgroundTaskInput) {
  return startChild('BackgroundTaskWorkflow', {
    workflowId,
    args: [task],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: backgroundTaskSummary(task.start.agent, task.start.task),
    typedSearchAttributes: [{ key: ConversationIdKey, value: input.conversationId }, ...ownerAttributes()],
  });
}

/**
 * A steer with `detach` (workflows/turn/run.ts): the waited call's running child becomes a background
 * task — its row opened (the call's result is then the receipt), and a BackgroundTaskWorkflow that
 * ADOPTS the child (waits on it, then delivers its answer as a followup) started, abandoned.
 */
async function detachCall(start: SubagentStart, input: ToolInput): Promise<void> {
  const task = await detachActivities.detachDelegation({
    conversationId: input.conversationId,
    turnId: input.turnId,
    callId: input.callId,
    agent: start.agent,
    task: start.task,
    childConversationId: start.conversationId,
  });
  await startTaskWorkflow(input, task.workflowId, {
    parentConversationId: input.conversationId,
    callId: input.callId,
    taskId: task.taskId,
    start: taskStart(start),
    adopt: true,
  });
}

export interface SubagentStep {
  /** Runs one delegate call: prepare, the child turn, its answer as the call's result. */
  run(input: ToolInput, scheduled: ScheduledChildCall): Promise<ToolOutcome>;
  /**
   * A waited delegate call to a remote A2A agent (the delegateA2A activity, `call`): a steer of the
   * parent is forwarded to the remote task as a message (its turn finalizes and answers the call);
   * a cancel, a detaching steer, or a steer the remote did not take cancels the call (CancelTask).
   */
  runRemote(input: ToolInput, call: () => Promise<ToolOutcome>): Promise<ToolOutcome>;
  /** A delegate call to a remote A2A agent ran (the delegateA2A activity): its usage counts in. */
  addRemote(usage: Usage): void;
  /** Subagent turns run (remote calls included), and their usage. */
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
        if (start.background && patched('background-subagents')) {
          // A background call (core/agents/background.ts): its task's workflow runs the subagent and
          // outlives this turn (ABANDON); the call's result is the receipt, appended below.
          await startBackgroundTask(start, input, start.background.workflowId);
          return roles.run('tools', undefined, (placed) =>
            toolActivities[scheduled.activity]!.executeWithOptions({ ...scheduled.options, ...placed }, [input]),
          );
        }
        // Under `delegate-detach` the child may outlive this turn (ABANDON): a steer can detach it.
        const detachable = patched('delegate-detach');
        const child = await startSubagentTurn(start, input.callId, detachable);
        count += 1;
        running.set(input.callId, {
          callId: input.callId,
          agent: start.agent,
          workflowId: start.workflowId,
          conversationId: start.conversationId,
        });
        // The parent's steer or cancellation reaches the child.
        let cancelled = false;
        let detach!: () => void;
        const detached = new Promise<'detached'>((resolve) => (detach = () => resolve('detached')));
        outer.cancelRequested.catch(() => {
          // A cancel is forwarded as a cancel: the child closes its own timeline, answers, and
          // the parent stops at its next step (workflows/turn/run.ts).
          const cancel = run.cancelRequest;
          const steer = cancel ? undefined : run.steerEvent();
          // A detaching steer stops the wait; the child goes on (its task delivers its answer).
          if (detachable && steer?.detach) return detach();
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
          const result = await Promise.race([child.result(), detached]);
          if (result === 'detached') await detachCall(start, input);
          else usage = addUsage(usage, subagentTurnUsage(result));
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

  const runRemote = (input: ToolInput, call: () => Promise<ToolOutcome>): Promise<ToolOutcome> => {
    const outer = CancellationScope.current();
    return CancellationScope.nonCancellable(async () => {
      const scope = new CancellationScope();
      outer.cancelRequested.catch(() => {
        const steer = run.cancelRequest ? undefined : run.steerEvent();
        if (!steer || steer.detach) return scope.cancel();
        remoteActivities.steerRemoteDelegation
          .executeWithOptions({ summary: `steer the remote task of call ${input.callId}`.slice(0, 160) }, [
            { ...input, steer: { text: steer.text, messageId: steer.messageId } },
          ])
          .then(
            (steered) => (steered ? undefined : scope.cancel()),
            () => scope.cancel(),
          );
      });
      return scope.run(call);
    });
  };

  return {
    run: runCall,
    runRemote,
    addRemote(remote) {
      count += 1;
      usage = addUsage(usage, remote);
    },
    get count() {
      return count;
    },
    get usage() {
      return usage;
    },
  };
}
