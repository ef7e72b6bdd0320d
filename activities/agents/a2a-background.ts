/**
 * A BACKGROUND delegate call to a remote A2A agent (`wait: false`, or the agent's
 * `background.delegate`; core/agents/remote-subagents.ts, workflows/background-task.ts): the task's
 * workflow runs `runRemoteTask`, the same remote call a waited one runs (activities/agents/a2a-delegate.ts
 * `runRemoteDelegation`) — as the delegating turn's agent version (its secrets), with the message ids
 * of the call — then `deliverBackgroundTask` hands its answer to the parent as a followup, once.
 *
 * - The remote task's events are `stage.a2a.event` blocks of the task's conversation
 *   (`<parent>:sub:<callId>`, the receipt names it), keyed by the delegating turn and the call: a
 *   retried attempt (a worker killed mid-stream) follows the task it sent, never a second one.
 * - A cancel of the task (agent.cancel, the gateway's cancel route) cancels this activity: the
 *   remote task gets CancelTask, and the task is recorded cancelled.
 * - The outcome carries the remote's model usage when it reported one (a durable-react remote:
 *   `dreact/usage`), else zero.
 *
 * `steerRemoteDelegation`: a steer of the parent while its WAITED call to a remote agent runs
 * (workflows/turn/subagent-step.ts) is sent to the remote task as a message; false when there was
 * nothing to steer, and the turn then cancels the call as before.
 */
import { Context } from '@temporalio/activity';
import { blockId } from '../../core/timeline/block';
import { ZERO_USAGE, type Usage } from '../../core/model/provider';
import type { ToolInput } from '../../core/turn/activity-contracts';
import type { TaskStatus } from '../../core/agents/background';
import { loadBackgroundTask } from '../../store/background-task-store';
import { loadBlocksById } from '../../store/timeline-store';
import type { ActivityDeps } from '../deps';
import type { ToolContext } from '../tools/types';
import type { AgentToolContext } from './define-tool';
import { headerAgentRef, turnHeaderId } from './turn-agent';
import { runRemoteDelegation, steerRemoteTask, type A2aDelegateOptions } from './a2a-delegate';

export interface RemoteTaskInput {
  parentConversationId: string;
  taskId: string;
}

/** How a remote background task ended (what deliverBackgroundTask records and delivers). */
export interface RemoteTaskOutcome {
  status: Exclude<TaskStatus, 'running'>;
  answer: string | null;
  error: string | null;
  usage: Usage;
}

/** What a steer of a waited remote call sends (workflows/turn/subagent-step.ts). */
export interface RemoteSteerInput extends ToolInput {
  steer: { text: string; messageId: string };
}

/**
 * The remote call's context as the delegating turn's agent version (its secrets): the call's ids,
 * its events in `conversationId` (the parent's for a waited call, the task's for a background one).
 */
async function remoteContext(
  deps: ActivityDeps,
  call: { parentConversationId: string; turnId: string; callId: string; conversationId: string },
): Promise<ToolContext & AgentToolContext> {
  const ctx = Context.current();
  const header = turnHeaderId(call.turnId);
  const found = await loadBlocksById(deps.db.pool, call.parentConversationId, [header]);
  const agent = await deps.agents.load(headerAgentRef(found.get(header), call.parentConversationId));
  return {
    agent: { ref: agent.ref, settings: agent.settings },
    secrets: agent.agent.secrets,
    conversationId: call.conversationId,
    turnId: call.turnId,
    callId: call.callId,
    signal: ctx.cancellationSignal,
    heartbeat: (d: unknown) => ctx.heartbeat(d),
    now: deps.now,
  } as unknown as ToolContext & AgentToolContext;
}

/** The activities of remote tasks: a background call's run, a waited call's steer. */
export function makeRemoteTaskActivities(deps: ActivityDeps, opts: A2aDelegateOptions = {}) {
  return {
    async runRemoteTask(input: RemoteTaskInput): Promise<RemoteTaskOutcome> {
      const ctx = Context.current();
      const task = await loadBackgroundTask(deps.db.pool, input.parentConversationId, input.taskId);
      if (!task) throw new Error(`runRemoteTask: no task ${input.taskId} in ${input.parentConversationId}`);
      const toolCtx = await remoteContext(deps, {
        parentConversationId: task.conversationId,
        turnId: task.turnId,
        callId: task.callId,
        conversationId: task.childConversationId,
      });
      // The activity's cancellation arrives with a heartbeat's answer: beat while the remote is quiet.
      const beat = setInterval(() => ctx.heartbeat({ taskId: task.taskId }), 1_000);
      try {
        const params = { agent: task.agent, task: task.task };
        const obs = await runRemoteDelegation(deps, opts, toolCtx, params, task.conversationId);
        const subagent = obs.meta?.subagent as { state?: string; usage?: Usage } | undefined;
        const usage = subagent?.usage ?? ZERO_USAGE;
        if (obs.ok) return { status: 'completed', answer: obs.text, error: null, usage };
        if (subagent?.state === 'canceled') return { status: 'cancelled', answer: null, error: null, usage };
        return { status: 'failed', answer: null, error: obs.text, usage };
      } finally {
        clearInterval(beat);
      }
    },

    /** Forwards a steer to a waited call's remote task; false: nothing steered (cancel the call). */
    async steerRemoteDelegation(input: RemoteSteerInput): Promise<boolean> {
      const id = blockId(input.turnId, 'react.tool.call', input.callId);
      const call = (await loadBlocksById(deps.db.pool, input.conversationId, [id])).get(id);
      const params = (JSON.parse(call?.text ?? '{}') as { params?: { agent?: unknown } }).params;
      if (typeof params?.agent !== 'string') return false;
      const toolCtx = await remoteContext(deps, { parentConversationId: input.conversationId, ...input });
      return steerRemoteTask(deps, opts, toolCtx, { agent: params.agent, ...input.steer });
    },
  };
}
