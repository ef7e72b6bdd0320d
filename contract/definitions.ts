/**
 * Signal, query and update definitions plus search attribute keys. Imported by workflows and by
 * the client, so it depends on nothing but the Temporal workflow API and pure contracts.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { StartTurnRequest, TurnState, UserEvent } from '../core/turn/contracts';
import type { ApprovalDecision, DecideToolCallArgs, PendingApproval } from '../core/governance/approval';
import type { CancelRequest } from '../core/turn/cancellation';

/**
 * Workflow task timeout of turns and their children (persist, compaction). A worker killed inside a
 * workflow task — or inside one of its local activities, which run within it — holds the turn until
 * this expires (default 10 s: a whole recovery). Their tasks take milliseconds (local activities
 * longer than 80 % of it extend the task), so 2 s is ample; histories stay small (a turn is
 * bounded by its iteration budget).
 */
export const SHORT_WORKFLOW_TASK_TIMEOUT = '2 seconds';

export const followupSignal = defineSignal<[UserEvent]>('followup');
export const steerSignal = defineSignal<[UserEvent]>('steer');
/**
 * Cancels the turn (sent straight to the turn workflow, `turnWorkflowId`): its in-flight round, tool call or approval wait is interrupted, the timeline
 * is closed and persisted, and the turn ends with the `cancelled` completion path — not a steer
 * (core/turn/cancellation.ts). A signal so a workflow (a schedule's overlap policy) can send it too.
 */
export const cancelSignal = defineSignal<[CancelRequest]>('cancel');
export const turnStateQuery = defineQuery<TurnState>('state');

export interface ConversationView {
  conversationId: string;
  nextTurnIndex: number;
  activeTurn: { turnIndex: number; workflowId: string } | null;
  queued: number;
  completedTurns: number;
}
export const conversationStateQuery = defineQuery<ConversationView>('state');
export const startTurnUpdate = defineUpdate<
  { turnIndex: number; turnId: string; workflowId: string },
  [StartTurnRequest]
>('startTurn');

/**
 * A person's decision on a tool call waiting for approval, sent straight to the turn workflow
 * (`turnWorkflowId`) with the update id `approval:<callId>`; its validator rejects an unknown or
 * decided call, a malformed edit and a principal without the `approve` scope (workflows/turn/run.ts registers it).
 */
export const decideToolCallUpdate = defineUpdate<ApprovalDecision, [DecideToolCallArgs]>('decideToolCall');
/** A queued turn's slot under its tenant's concurrency limit is granted (activities/governance/turn-slots.ts). */
export const slotGrantedSignal = defineSignal('slotGranted');

/** The turn's tool calls waiting for a decision. */
export const pendingApprovalsQuery = defineQuery<PendingApproval[]>('pendingApprovals');

/** A subagent turn a delegate call of this turn is running now (workflows/turn/subagent-step.ts). */
export interface RunningSubagent {
  /** The parent's delegate call. */
  callId: string;
  agent: string;
  workflowId: string;
  conversationId: string;
}
/**
 * The subagent turns this turn waits on: a client lists their waiting calls with the parent's
 * (client/approvals.ts), so a subagent's approval surfaces in the parent conversation.
 */
export const runningSubagentsQuery = defineQuery<RunningSubagent[]>('runningSubagents');

export const ConversationIdKey = defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD);
export const TurnIndexKey = defineSearchAttributeKey('TurnIndex', SearchAttributeType.INT);
export const TurnStatusKey = defineSearchAttributeKey('TurnStatus', SearchAttributeType.KEYWORD);
/** The owner of a conversation and its turns (set from the verified API key; the CLI's is `local`). */
export const TenantIdKey = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const ProjectIdKey = defineSearchAttributeKey('ProjectId', SearchAttributeType.KEYWORD);
/** The agent a conversation is bound to, on it (set by the client at start) and on its turns. */
export const AgentNameKey = defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD);
/** The schedule a run (ScheduledTurnWorkflow) and its schedule belong to (core/schedules/spec.ts). */
export const ScheduleIdKey = defineSearchAttributeKey('ScheduleId', SearchAttributeType.KEYWORD);
/** Every search attribute the runtime sets: a server must have them registered (the dev stack, `dreact doctor`). */
export const SEARCH_ATTRIBUTE_KEYS = [
  ConversationIdKey,
  TurnIndexKey,
  TurnStatusKey,
  TenantIdKey,
  ProjectIdKey,
  AgentNameKey,
  ScheduleIdKey,
];
/** Failure type of a startTurn naming another agent than the one the conversation is bound to. */
export const AGENT_CONFLICT = 'AgentConflict';
