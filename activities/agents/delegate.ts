/**
 * agent.delegate on the worker (core/agents/subagents.ts, workflows/turn/subagent-step.ts): two halves
 * around the child workflow the turn runs.
 *
 * - `prepareDelegation` (activity, before the child): checks the call — its params, that the turn's
 *   agent lists the subagent, the depth cap, that this worker has the agent — and opens the child's
 *   conversation under the parent's owner, linked to the delegating turn (core/governance/spend-rollup.ts:
 *   the child's calls reserve against every cap above it; its turns inherit the depth cap). It returns what the workflow needs to start the child,
 *   or nothing (refused, or answered already: a retry or replay starts no second child). Retries
 *   repeat the same idempotent checks.
 * - the tool implementation (run by the tool activity after the child): the same check (a refusal
 *   is the call's observation), then the child turn's answer — or its failure — with the files it
 *   produced, by reference, as the call's result. The tool activity makes that append idempotent.
 * - a BACKGROUND call (`wait: false`, or the agent's `background.delegate`; core/agents/background.ts):
 *   prepareDelegation also opens its `background_tasks` row and returns the task's workflow to start;
 *   the call's result is then the receipt (activities/agents/background-tasks.ts delivers the answer).
 */
import type { Pool } from 'pg';
import { blockId } from '../../core/timeline/block';
import type { ToolInput } from '../../core/turn/activity-contracts';
import { AgentDelegateParamsSchema, agentDelegate, type AgentDelegateParams } from '../../core/tools/agent-tools';
import {
  DELEGATE_TOOL_ID,
  delegationDepth,
  delegationRefusal,
  subagentConversationId,
  subagentWorkflowId,
} from '../../core/agents/subagents';
import type { AgentRef } from '../../core/agents/ref';
import { loadBlocksById } from '../../store/timeline-store';
import { loadSpendLink, openSubConversation, subagentOutcome } from '../../store/subagent-store';
import { childLink, type SpendLink } from '../../core/governance/spend-rollup';
import { listHostedFiles } from '../../store/file-store';
import type { ActivityDeps } from '../deps';
import type { ToolImpl, ToolObservation } from '../tools/types';
import type { AgentToolContext } from './define-tool';
import { turnOwner } from '../governance/owner';
import type { AgentView } from '../deps';
import {
  backgroundTaskId,
  backgroundTaskWorkflowId,
  receiptText,
  runsInBackground,
  type OnResult,
} from '../../core/agents/background';
import { remoteSubagentOf } from '../../core/agents/remote-subagents';
import { backgroundTaskOfCall, openBackgroundTask, type BackgroundTask } from '../../store/background-task-store';

/** What prepareDelegation hands the workflow: the child to start, or nothing. */
export interface DelegationStart {
  start?: {
    agent: string;
    task: string;
    /** The child conversation (`<parent>:sub:<callId>`). */
    conversationId: string;
    /** Its turn's workflow id (`conv/<parent>/sub/<callId>`). */
    workflowId: string;
    /** Set when the call runs in the background (core/agents/background.ts): the task's workflow. */
    background?: { taskId: string; workflowId: string; onResult: OnResult };
    /**
     * The subagent is a remote A2A agent (core/agents/remote-subagents.ts; background calls only: a
     * waited one runs as delegateA2A): the task's workflow runs its remote task, no turn.
     */
    remote?: boolean;
  };
}

type Check =
  | {
      ok: true;
      params: AgentDelegateParams;
      definition: AgentView['agent']['definition'];
      link?: SpendLink;
      remote?: boolean;
    }
  | { ok: false; text: string };

/**
 * Whether the turn's agent may run this delegation (the model sees the text of a refusal). A
 * subagent's turn reads its depth cap from its own link: the agents above it decide how deep it goes.
 */
async function checkDelegation(
  deps: ActivityDeps,
  conversationId: string,
  ref: AgentRef | undefined,
  raw: unknown,
): Promise<Check> {
  const parsed = AgentDelegateParamsSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, text: `invalid ${DELEGATE_TOOL_ID} params: ${parsed.error.message}` };
  const [view, link] = await Promise.all([deps.agents.load(ref), loadSpendLink(deps.db.pool, conversationId)]);
  const depth = ref?.depth ?? delegationDepth(conversationId);
  const definition = view.agent.definition;
  const refusal = delegationRefusal({ ...definition, name: view.ref.name }, depth, parsed.data.agent, link?.depthCap);
  if (refusal) return { ok: false, text: refusal };
  // A remote A2A agent is not an agent of this worker (the remote call checks the rest).
  const remote = remoteSubagentOf(definition.subagents, parsed.data.agent) !== undefined;
  if (remote) return { ok: true, params: parsed.data, definition, remote, ...(link ? { link } : {}) };
  try {
    // The subagent runs for the parent conversation's owner: one its tenant may not see is unknown.
    deps.agents.current(parsed.data.agent, await turnOwner(deps.db.pool, conversationId));
  } catch (err) {
    return { ok: false, text: (err as Error).message };
  }
  return { ok: true, params: parsed.data, definition, ...(link ? { link } : {}) };
}

export function makeDelegationActivities(deps: ActivityDeps) {
  const pool = deps.db.pool;
  return {
    async prepareDelegation(input: ToolInput): Promise<DelegationStart> {
      const { conversationId, turnId, callId } = input;
      const callBlock = blockId(turnId, 'react.tool.call', callId);
      const resultBlock = blockId(turnId, 'react.tool.result', callId);
      const found = await loadBlocksById(pool, conversationId, [callBlock, resultBlock]);
      if (found.get(resultBlock)) return {}; // answered already
      const call = found.get(callBlock);
      if (!call)
        throw new Error(`prepareDelegation: no react.tool.call block for ${callId} in ${conversationId}/${turnId}`);
      const raw = input.params ?? (JSON.parse(call.text ?? '{}') as { params?: unknown }).params;
      const check = await checkDelegation(deps, conversationId, input.agent, raw);
      if (!check.ok) return {}; // the tool activity records the refusal
      const background = runsInBackground(check.params.wait, check.definition.background?.delegate);
      if (check.remote && !background) return {}; // planned as delegateA2A, never here
      const child = subagentConversationId(conversationId, callId);
      // The child's calls count against this turn's cap and every cap above it.
      const link = childLink({
        conversationId,
        turnId,
        link: check.link,
        turnCapUsd: check.definition.limits?.spend_usd_per_turn,
        maxDepth: check.definition.max_depth,
      });
      await openSubConversation(pool, conversationId, child, link);
      const workflowId = subagentWorkflowId(conversationId, callId);
      const start = {
        agent: check.params.agent,
        task: check.params.task,
        conversationId: child,
        workflowId,
        ...(check.remote ? { remote: true } : {}),
      };
      if (!background) return { start };
      const task = {
        taskId: backgroundTaskId(callId),
        workflowId: backgroundTaskWorkflowId(conversationId, callId),
        onResult: check.definition.background?.on_result ?? 'followup',
      };
      await openBackgroundTask(pool, {
        conversationId,
        taskId: task.taskId,
        callId,
        turnId,
        agent: start.agent,
        task: start.task,
        childConversationId: child,
        workflowId: task.workflowId,
        onResult: task.onResult,
      });
      return { start: { ...start, background: task } };
    },
  };
}

/** The delegate tool's pair; `bind(deps)` once the worker's deps exist (the impl reads agents and turns). */
export function createDelegateTool() {
  let bound: ActivityDeps | undefined;
  const impl: ToolImpl = {
    id: DELEGATE_TOOL_ID,
    async run(params, ctx): Promise<ToolObservation> {
      if (!bound) throw new Error('agent.delegate: the worker did not bind its deps');
      const deps = bound;
      const ref = (ctx as typeof ctx & Partial<AgentToolContext>).agent?.ref;
      const check = await checkDelegation(deps, ctx.conversationId, ref, params);
      if (!check.ok) return { ok: false, text: check.text, meta: { subagent_refused: true } };
      // A background call's observation is its receipt (prepareDelegation opened the task).
      const task = await backgroundTaskOfCall(deps.db.pool, ctx.conversationId, ctx.callId);
      if (task) return taskReceipt(task);
      return childObservation(deps.db.pool, ctx.conversationId, ctx.callId, check.params);
    },
  };
  return {
    tool: { declaration: agentDelegate, impl },
    bind(deps: ActivityDeps) {
      bound = deps;
    },
  };
}

/** The files a subagent's conversation produced, and their listing by reference for the parent. */
export async function childFiles(pool: Pool, child: string) {
  const files = await listHostedFiles(pool, child);
  const listing = files.length
    ? `\n\nFiles it produced (conversation ${child}):\n${files.map((f) => `- ${f.path} (${f.mime}, ${f.size} bytes)`).join('\n')}`
    : '';
  return { files, listing };
}

/** The receipt of a background delegate call (core/agents/background.ts). */
function taskReceipt(task: BackgroundTask): ToolObservation {
  return {
    ok: true,
    text: receiptText({
      taskId: task.taskId,
      agent: task.agent,
      conversationId: task.childConversationId,
      onResult: task.onResult,
    }),
    meta: {
      subagent: { agent: task.agent, conversation_id: task.childConversationId, workflow_id: task.workflowId },
      background_task: { task_id: task.taskId, workflow_id: task.workflowId, on_result: task.onResult },
    },
  };
}

/** The child's answer (or failure) and its files, as the delegate call's result. */
async function childObservation(
  pool: Pool,
  parentId: string,
  callId: string,
  params: AgentDelegateParams,
): Promise<ToolObservation> {
  const child = subagentConversationId(parentId, callId);
  const outcome = await subagentOutcome(pool, child);
  const meta = {
    subagent: {
      agent: params.agent,
      conversation_id: child,
      workflow_id: subagentWorkflowId(parentId, callId),
      ...(outcome?.completionPath ? { completion_path: outcome.completionPath } : {}),
      ...(outcome?.rounds != null ? { rounds: outcome.rounds } : {}),
      ...(outcome?.usage ? { usage: outcome.usage } : {}),
    },
  };
  if (!outcome || outcome.status === 'running')
    return { ok: false, text: `subagent ${params.agent} did not finish its turn (${child})`, meta };
  if (outcome.status === 'failed')
    return { ok: false, text: `subagent ${params.agent} failed: ${outcome.error ?? 'unknown error'}`, meta };
  const { files, listing } = await childFiles(pool, child);
  return {
    ok: true,
    text: `${outcome.answer ?? ''}${listing}`,
    meta: {
      subagent: {
        ...meta.subagent,
        files: files.map((f) => ({ path: f.path, mime: f.mime, size: f.size, sha256: f.sha256 })),
      },
    },
  };
}
