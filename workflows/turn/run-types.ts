/**
 * The shapes of a turn's run (./run.ts): what the steps read and call on it, and the status writer
 * they report through. Types only.
 */
import type { ModelConfig } from '../../core/model/config';
import type { TurnRef } from '../../core/turn/ref';
import type { AgentRef } from '../../core/agents/ref';
import type { TurnInput, Usage, UserEvent } from '../../core/turn/contracts';
import type { TurnPlacement } from '../../core/turn/activity-contracts';
import type { IterationBudget } from '../../core/turn/budget';
import type { ApprovalDecision, PendingApproval } from '../../core/governance/approval';
import type { RunningSubagent } from '../../contract/definitions';
import type { RoleQueues } from '../role-queue';
import type { CancelRequest } from '../../core/turn/cancellation';
import type { TurnMetrics } from '../metrics';

/** The turn's status as the steps report it; the run turns each into the state query's and the search attribute's. */
export interface TurnStatusWriter {
  /** Waits for a slot under its tenant's turn limit, at `position` in the queue. */
  queued(position: number): void;
  /** Still waiting after a reap: the queue's new position. */
  requeued(position: number): void;
  /** Its slot was granted: running. */
  granted(): void;
  /** A compaction child runs before the round (`line` says why, for the current details). */
  compacting(line: string): void;
  /** The compaction ended: running. */
  compacted(): void;
  /** A tool call starts (+1) or stops (-1) waiting for a person's decision. */
  approvalWait(delta: 1 | -1): void;
  /** The finalize round after a steer. */
  finalizing(): void;
  /** The persist child writes the timeline. */
  persisting(): void;
  /** The turn completed. */
  completed(): void;
  /** The turn closed after a cancel. */
  cancelled(): void;
}

export interface TurnRun {
  readonly input: TurnInput;
  readonly conversationId: string;
  readonly turnId: string;
  readonly turnIndex: number;
  readonly workflowId: string;
  /** The client's model override; `{}` lets the activities' worker resolve its deployment default (never scripted). */
  readonly model: ModelConfig;
  /** The turn and the client's overrides, before loadContext resolved its agent (loadContext's input). */
  readonly ref: TurnRef;
  /** The turn with its agent version once loadContext resolved it: the per-turn shape of every later activity input. */
  readonly turn: TurnRef;
  readonly budget: IterationBudget;
  readonly metrics: TurnMetrics;
  readonly status: TurnStatusWriter;
  /** The model usage of the turn's own rounds (and its synthesis). */
  readonly usage: Usage;
  addUsage(u: Usage): void;

  /** The turn's agent version, once loadContext resolved it (absent in histories recorded before agents). */
  readonly agent: AgentRef | undefined;
  /** `{ agent }` for an activity input, or nothing. */
  withAgent(): { agent?: AgentRef };
  /** The role queues and timeouts, once loadContext placed the turn (workflows/role-queue.ts). */
  readonly roles: RoleQueues;
  readonly placement: TurnPlacement | undefined;
  /** What loadContext resolved: the agent, the turn's placement. */
  opened(ctx: { agent?: AgentRef; placement?: TurnPlacement }): void;

  /** A steer arrived since the last finalize round. */
  readonly steerRequested: boolean;
  /** The steer that is stopping the turn, if one is (forwarded to a running subagent). */
  steerEvent(): UserEvent | undefined;
  /** The finalize round takes the steer. */
  steerTaken(): void;
  /** Who cancelled the turn, once a cancel arrived: the loop stops before its next step. */
  readonly cancelRequest: CancelRequest | undefined;
  /** Resolves once the cancellation is in the timeline (the close awaits it). */
  cancelRecorded(): Promise<void>;
  /** The events that arrived since they were last taken (a decide call gets them). */
  takeEvents(): UserEvent[];
  /** Whether a followup waits among the events not taken yet. */
  followupWaiting(): boolean;
  /** Whether the tenant's queue granted this turn's slot. */
  readonly slotGranted: boolean;
  /**
   * Tool calls waiting for a person (listed once their request is recorded) and the decisions the
   * `decideToolCall` Update brought; the approval step fills `pending` (workflows/turn/approval-step.ts).
   */
  readonly approvals: {
    readonly pending: Map<string, PendingApproval>;
    readonly decided: Map<string, ApprovalDecision>;
  };
  /** The subagent turns this turn's delegate calls run now (workflows/turn/subagent-step.ts). */
  readonly subagents: Map<string, RunningSubagent>;

  /**
   * Runs work in a scope a steer or a cancel can cancel (`cancelOnly`: a cancel only — the
   * finalize round after a steer); undefined when one did, or when the turn was cancelled already.
   */
  cancellable<T>(fn: () => Promise<T>, opts?: { cancelOnly?: boolean }): Promise<T | undefined>;
  /** Temporal UI's current details: the turn's line (kept when omitted) and the role queues' waits. */
  details(text?: string): void;
  /** The usage ledger, for the current details. */
  usageLine(): string;
}
