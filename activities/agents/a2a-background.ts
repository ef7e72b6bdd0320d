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
 */
import { Context } from '@temporalio/activity';
import { ZERO_USAGE, type Usage } from '../../core/model/provider';
import type { TaskStatus } from '../../core/agents/background';
import { loadBackgroundTask } from '../../store/background-task-store';
import { loadBlocksById } from '../../store/timeline-store';
import type { ActivityDeps } from '../deps';
import type { ToolContext } from '../tools/types';
import type { AgentToolContext } from './define-tool';
import { headerAgentRef, turnHeaderId } from './turn-agent';
import { runRemoteDelegation, type A2aDelegateOptions } from './a2a-delegate';

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

/** The activity that runs a background call's remote task (one heartbeat a second while it waits). */
export function makeRemoteTaskActivities(deps: ActivityDeps, opts: A2aDelegateOptions = {}) {
  return {
    async runRemoteTask(input: RemoteTaskInput): Promise<RemoteTaskOutcome> {
      const ctx = Context.current();
      const pool = deps.db.pool;
      const task = await loadBackgroundTask(pool, input.parentConversationId, input.taskId);
      if (!task) throw new Error(`runRemoteTask: no task ${input.taskId} in ${input.parentConversationId}`);
      const header = turnHeaderId(task.turnId);
      const found = await loadBlocksById(pool, task.conversationId, [header]);
      const agent = await deps.agents.load(headerAgentRef(found.get(header), task.conversationId));
      // The activity's cancellation arrives with a heartbeat's answer: beat while the remote is quiet.
      const beat = setInterval(() => ctx.heartbeat({ taskId: task.taskId }), 1_000);
      try {
        const toolCtx = {
          agent: { ref: agent.ref, settings: agent.settings },
          secrets: agent.agent.secrets,
          conversationId: task.childConversationId,
          turnId: task.turnId,
          callId: task.callId,
          signal: ctx.cancellationSignal,
          heartbeat: (d: unknown) => ctx.heartbeat(d),
          now: deps.now,
        } as unknown as ToolContext & AgentToolContext;
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
  };
}
