/**
 * One schedule run (ScheduledTurnWorkflow, workflows/scheduled-turn.ts): its input — what the
 * Temporal Schedule's action passes, so Temporal UI shows what the run does — and its outcome.
 * The ids a run derives from its own workflow id (`sched.<scheduleId>-<scheduled time>`, given by
 * the Schedule) are stable across retries: a retried activity claims the same conversation and
 * sends the same message id, so it never starts a second turn. Pure.
 */
import { conversationSpace } from '../tenancy/conversation-space';
import type { RunOutcome } from './spec';

export interface ScheduleOwner {
  tenantId: string;
  projectId: string;
  userId: string | null;
}

export interface ScheduledRunInput {
  scheduleId: string;
  agent: string;
  prompt: string;
  owner: ScheduleOwner;
  /** The stored conversation id every run goes to; absent: a new conversation each run. */
  conversationId?: string;
  /** The schedule's own spend cap per UTC day. */
  maxUsdPerDay?: number;
  /** POST the answer there (signed with the schedule's secret). */
  webhookUrl?: string;
}

export interface ScheduledRunOutcome {
  outcome: RunOutcome;
  conversationId?: string;
  turnIndex?: number;
  refusedReason?: string;
  completionPath?: string;
}

/** The workflow id prefix of a schedule's runs (Temporal appends `-<scheduled time>`). */
export const runWorkflowIdPrefix = (scheduleId: string) => `sched.${scheduleId}`;

/** The conversation a new-conversation-each-run schedule's run starts: in its owner's space, named after the run. */
export function runConversationId(input: Pick<ScheduledRunInput, 'conversationId' | 'owner'>, runWorkflowId: string) {
  if (input.conversationId !== undefined) return input.conversationId;
  return conversationSpace(input.owner) + runWorkflowId.replace(/[^A-Za-z0-9_.:-]/g, '-');
}

/** The message id of a run's turn (the startTurn update id): one per run, whatever retries. */
export function runMessageId(runWorkflowId: string): string {
  const id = runWorkflowId.replace(/[^A-Za-z0-9_.:-]/g, '-');
  // The scheduled time is at the end: a long id keeps its tail.
  return `msg_${id.length > 196 ? id.slice(-196) : id}`;
}
