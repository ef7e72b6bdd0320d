/**
 * The activity contracts of a turn: the inputs and outcomes of the turn's activities (loadContext,
 * decide, the tool activities, finalize/persist/failure) and of compaction. Types only: the module
 * builds no zod schema, so workflows may import it (with `import type`) at no cost per instance.
 * ./contracts re-exports all of it.
 */
import type { AgentRef } from '../agents/ref';
import type { CompletionPath, TurnAgent, TurnPrompt, Usage, UserEvent } from './contracts';
import type { TurnRef } from './ref';
import type { ServedBy } from '../model/provider';
import type { ActivityRole } from './roles';
import type { TurnTimeouts } from './timeouts';
import type { ToolCallPlan } from '../tools/call-plan';
import type { CancelRequest } from './cancellation';

// ---- activity contracts -------------------------------------------------------------------

export interface LoadContextInput {
  /** The turn and its client's overrides (no agent version yet: loadContext resolves it). */
  turn: TurnRef;
  workflowId: string;
  prompt: TurnPrompt;
  /** The turn's agent by name: loadContext resolves it to the worker's current version (absent: default). */
  agent?: TurnAgent;
}

/** What loadContext resolved for the turn: from here on the turn carries only `agent` (a ref). */
export interface LoadedContext {
  blocks: number;
  /** The round budget (the agent's limit, the turn's override under it, else the worker's). */
  maxRounds: number;
  /** The old name of `maxRounds`, in results recorded before the rename (read when `maxRounds` is absent). */
  maxIterations?: number;
  needsTitle: boolean;
  /**
   * The title call runs inside the turn's first round (its decide input's `title`), not as the
   * `gate` activity beside it: one activity and the workflow task its completion woke fewer. Absent
   * in results recorded before (those turns replay scheduling the gate).
   */
  titleInRound?: boolean;
  /** Tools the agent offers the turn before selection. */
  toolCount: number;
  /** The agent version the turn runs on (absent in histories recorded before agents). */
  agent?: AgentRef;
  /** The settings the workflow itself needs (absent in histories recorded before agents). */
  settings?: {
    protocol?: 'channels' | 'native';
    answerSynthesis?: boolean;
  };
  /**
   * The turn's concurrency slot when its tenant has a limit (activities/governance/turn-slots.ts):
   * granted at once, or queued at `position` (the turn waits for `slotGranted`; the queue's head
   * reaps dead holders every `reapSeconds`). Absent: no limit, nothing to release.
   */
  slot?: { granted: boolean; position: number; reapSeconds: number };
  /**
   * Where and how the turn schedules its activities (the worker's configuration, recorded here so
   * a replay sees the same): each role's task queue and the deployment's timeouts
   * (core/turn/roles.ts, core/turn/timeouts.ts). Absent in histories recorded before roles: every
   * activity on the turn's own queue with the local timeouts.
   */
  placement?: TurnPlacement;
}

/** A turn's role queues and timeouts (LoadedContext.placement). */
export interface TurnPlacement {
  queues: Record<ActivityRole, string>;
  timeouts: TurnTimeouts;
}

export interface DecideInput {
  /** The turn, its agent version and its client's overrides (`deps.agents.forTurn` resolves them). */
  turn: TurnRef;
  round: number;
  mode: 'normal' | 'finalize';
  /** Events received since the last boundary; folded into the timeline before rendering. */
  events: UserEvent[];
  iteration: { index: number; max: number; base: number; bonus: number };
  /** Native two-phase mode: 'loop' rounds do not stream an answer (a synthesis call does). */
  answerPhase?: 'stream' | 'loop';
  /**
   * A new conversation's title call (the gate, activities/turn/gate.ts), run beside this round's
   * model call inside the activity: on the turn's rounds until one returned (LoadedContext.titleInRound).
   */
  title?: { prompt: string };
}

/** What the loop acts on: every outcome but `over_budget` (answered by compaction). */
export type RoundOutcome = Exclude<DecideOutcome, OverBudget>;

/**
 * The provider and model that answered the round's model call (a fallback chain may have moved on).
 * Absent in outcomes recorded before it was carried, a round an earlier attempt recorded, and a
 * round whose call a spend cap refused.
 */
export interface Answered {
  answeredBy?: ServedBy;
}

export type DecideOutcome =
  /** Legacy single-call shape (kept so recorded histories replay unchanged). */
  | { kind: 'tool'; callId: string; toolId: string; summary: string; usage: Usage }
  /** Accepted calls (run concurrently when there are several); `final` (multi-action: complete after neutral tools) ends the turn after them. */
  | ({
      kind: 'tools';
      calls: ToolCallPlan[];
      final?: { action: 'complete' | 'exit'; answer: string };
      usage: Usage;
    } & Answered)
  | ({ kind: 'final'; action: 'complete' | 'exit'; answer: string; completionPath: string; usage: Usage } & Answered)
  | ({ kind: 'invalid'; code: string; message: string; usage: Usage } & Answered)
  /** The request would not fit the context budget: no model call; the workflow compacts, then reruns the round. */
  | OverBudget;

export interface ToolInput {
  conversationId: string;
  turnId: string;
  callId: string;
  toolId: string;
  /**
   * The turn's agent version, sent for delegate (child) calls only: other tool activities read it
   * from the turn header beside the call block, so history does not repeat it per call.
   */
  agent?: AgentRef;
  /** Params a person edited before approving: they replace the call block's (validated like them). */
  params?: Record<string, unknown>;
  /**
   * The call runs concurrently with others of its round: its result is held and appended with the
   * batch, in call order (`appendToolResults`), instead of when it finishes.
   */
  heldForBatch?: boolean;
}

/** The calls of a concurrent batch whose held results go to the timeline now, in this order. */
export interface ToolBatchInput {
  conversationId: string;
  turnId: string;
  callIds: string[];
}

/** A tool call whose activity failed for good: the failure becomes the call's observation. */
export interface ToolFailureInput extends ToolInput {
  /** The failure's message chain. */
  error: string;
  /** ApplicationFailure type of the last failure, when it had one. */
  failureType?: string;
  /** Temporal's retry state when the activity gave up (e.g. MAXIMUM_ATTEMPTS_REACHED). */
  retryState?: string;
}

export interface ToolOutcome {
  ok: boolean;
  /** Bounded preview (≤ PREVIEW_CHARS) — the full result lives in the timeline under its tc: path. */
  preview: string;
  sizeBytes: number;
  /**
   * A delegate call to a remote A2A agent (activities/agents/a2a-delegate.ts): the remote's model
   * usage (zero when it reported none), rolled into the turn's `subagentUsage`.
   */
  subagentUsage?: Usage;
}

export interface RecordEventsInput {
  conversationId: string;
  turnId: string;
  events: UserEvent[];
}

/** The small summary of a finished turn (input of finalizeTurn and of PersistTurnWorkflow). */
export interface TurnSummary {
  conversationId: string;
  turnId: string;
  turnIndex: number;
  answer: string;
  completionPath: CompletionPath;
  rounds: number;
  usage: Usage;
  /** The models that answered the turn's rounds, in the order they first did (the stream's `done` names them). */
  models?: ServedBy[];
  /** Who cancelled the turn, and why (completionPath `cancelled`; the stream's `done` says so). */
  cancelled?: CancelRequest;
}

/** What a failed turn records about itself (turns row and stream). */
export interface TurnFailure {
  conversationId: string;
  turnId: string;
  turnIndex: number;
  workflowId: string;
  /** The failure's message chain, bounded. */
  error: string;
}

// ---- compaction -----------------------------------------------------------------------------

/** Why a compaction runs: the render's estimate is over the budget, or the provider said so. */
export type CompactionReason = 'over_budget' | 'context_length';

export interface CompactionInput {
  /** `<turn workflow id>/compact/<k>`: the child workflow's id and the compaction's key. */
  compactionId: string;
  reason: CompactionReason;
  budget: number;
  /** The estimate of the request that did not fit (tokens). */
  estimate: number;
  /** Tokens of the system prompt and tool schemas. */
  systemTokens: number;
  /** The turn: the summariser is its agent's `compaction` role under the turn's model override. */
  turn: TurnRef;
  /** The turn's role queues and timeouts (the summariser runs on the models queue). */
  placement?: TurnPlacement;
}

export type CompactionPlanOutcome =
  | {
      status: 'planned';
      kind: 'history' | 'mid_turn';
      coveredTurns: string[];
      tokensBefore: number;
      tokensAfter: number;
    }
  | { status: 'skipped'; reason: 'no_visible_token_reduction' | 'nothing_to_compact'; tokensBefore: number }
  | { status: 'breaker_open'; failures: number };

export type CompactionResult =
  | { status: 'compacted'; coveredTurns: string[]; tokensBefore: number; tokensAfter: number; usage: Usage }
  | { status: 'skipped'; reason: string; tokensBefore: number }
  | { status: 'breaker_open'; failures: number }
  | { status: 'failed'; error: string; failures: number };

/** The render's verdict when a round's request would not fit: no model call was made. */
export interface OverBudget {
  kind: 'over_budget';
  estimate: number;
  budget: number;
  systemTokens: number;
  usage: Usage;
}
