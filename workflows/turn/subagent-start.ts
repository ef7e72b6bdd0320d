/**
 * How a subagent's turn starts as a child workflow (the TurnWorkflow on `<parent>:sub:<callId>`,
 * id `conv/<parent>/sub/<callId>`): by the delegating turn itself (workflows/turn/subagent-step.ts)
 * or, for a background call, by its task's workflow (workflows/background-task.ts). One set of
 * options for both, so the child's history, summary and search attributes are the same.
 */
import {
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { TurnWorkflow } from '../../contract/workflows';
import { subagentSummary } from '../../core/agents/subagents';
import { turnIdFor } from '../../core/turn/ids';
import type { DelegationStart } from '../../activities/agents/delegate';
import type { TurnResult } from '../../core/turn/contracts';
import type { Usage } from '../../core/model/provider';
import { addUsage } from '../../core/model/usage';
import {
  AgentNameKey,
  ConversationIdKey,
  ProjectIdKey,
  SHORT_WORKFLOW_TASK_TIMEOUT,
  TenantIdKey,
  TurnIndexKey,
  TurnStatusKey,
} from '../../contract/definitions';

export type SubagentStart = NonNullable<DelegationStart['start']>;

/** The owner's search attributes of the running workflow (TenantId, ProjectId), for a child. */
export function ownerAttributes() {
  const owner = workflowInfo().typedSearchAttributes;
  const tenant = owner.get(TenantIdKey);
  const project = owner.get(ProjectIdKey);
  return [
    ...(tenant !== undefined ? [{ key: TenantIdKey, value: tenant }] : []),
    ...(project !== undefined ? [{ key: ProjectIdKey, value: project }] : []),
  ];
}

/** Starts the subagent's (only) turn of a delegate call `callId`. */
export function startSubagentTurn(
  start: SubagentStart,
  callId: string,
  /** ABANDON: the child may outlive its parent (a waited call a steer can detach, workflows/turn/subagent-step.ts). */
  abandon = false,
): Promise<ChildWorkflowHandle<TurnWorkflow>> {
  return startChild<TurnWorkflow>('TurnWorkflow', {
    workflowId: start.workflowId,
    args: [
      {
        conversationId: start.conversationId,
        turnIndex: 1,
        turnId: turnIdFor(1),
        prompt: { text: start.task, messageId: `delegate-${callId}` },
        options: {},
        agent: { name: start.agent },
      },
    ],
    parentClosePolicy: abandon ? ParentClosePolicy.ABANDON : ParentClosePolicy.REQUEST_CANCEL,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
    staticSummary: subagentSummary(start.agent, start.task),
    typedSearchAttributes: [
      { key: ConversationIdKey, value: start.conversationId },
      { key: TurnIndexKey, value: 1 },
      { key: TurnStatusKey, value: 'running' },
      { key: AgentNameKey, value: start.agent },
      ...ownerAttributes(),
    ],
  });
}

/** A subagent turn's model usage: its own, its compactions' and its own subagents'. */
export function subagentTurnUsage(result: TurnResult): Usage {
  let usage = result.usage;
  if (result.compactionUsage) usage = addUsage(usage, result.compactionUsage);
  if (result.subagentUsage) usage = addUsage(usage, result.subagentUsage);
  return usage;
}
