/**
 * The workflow function types a client needs to start, signal and query the runtime's workflows,
 * without importing workflows/ (docs/CONVENTIONS.md: Layout). The workflows implement these types
 * (test/unit/workflows/contract-types.test.ts holds them to it).
 */
import type { AttachmentRef, TurnInput, TurnOptions, TurnResult } from '../core/turn/contracts';
import type { InspectedRound, InspectRoundInput } from '../core/evals/inspect';
import type { PurgeCounts } from '../store/purge-store';

/** The input of ConversationWorkflow (`conv/<id>`), also what it continues as new with. */
export interface ConversationState {
  conversationId: string;
  nextTurnIndex: number;
  completedTurns: number;
  queue: Array<{
    turnIndex: number;
    prompt: string;
    messageId: string;
    options: TurnOptions;
    attachments?: AttachmentRef[];
    /** The schedule whose run queued this turn (StartTurnRequest.scheduleId). */
    scheduleId?: string;
  }>;
  /** Recently seen message ids (bounded) so a repeated followup starts at most one turn. */
  seenMessages: string[];
  lastOptions?: TurnOptions;
  /** The agent the conversation is bound to: its first turn's (absent there: `default`). */
  agent?: string;
}

/** ConversationWorkflow: serialises the turns of one conversation (workflows/conversation.ts). */
export type ConversationWorkflow = (initial: ConversationState) => Promise<void>;

/** TurnWorkflow (`conv/<id>/turn/<n>`): one user prompt and the agent's work on it (workflows/turn/workflow.ts). */
export type TurnWorkflow = (input: TurnInput) => Promise<TurnResult>;

/** What PurgeConversationWorkflow removed: rows per table. */
export interface PurgeResult {
  conversationId: string;
  /** True when a running conversation workflow was asked to stop. */
  cancelled: boolean;
  removed: PurgeCounts;
}

/** PurgeConversationWorkflow (`purge/<id>`): retention of one conversation (workflows/purge.ts). */
export type PurgeConversationWorkflow = (input: { conversationId: string }) => Promise<PurgeResult>;

/** InspectRoundWorkflow: the request a round sent to the model, rebuilt on a worker (workflows/eval-inspect.ts). */
export type InspectRoundWorkflow = (input: InspectRoundInput) => Promise<InspectedRound>;
