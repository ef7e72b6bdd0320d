/**
 * The turn's run: its ids, budget, usage and events; the turn's signal, query and Update handlers
 * (followup, steer, cancel, slotGranted; state, pendingApprovals, runningSubagents; decideToolCall)
 * and the state they feed and read; the scope a steer or a cancel cancels; Temporal UI's current details — and the
 * turn's status. This file is the one writer of the state query's `status` and of the `TurnStatus`
 * search attribute: the steps say what happens (queued, compacting, waiting for a person, …) and
 * the run writes both, the search attribute upserted exactly where the steps used to write it.
 *
 * Which statuses reach the search attribute: `queued`, `running`, `awaiting_approval`, `completed`,
 * `cancelled` and `failed` (what Temporal UI and `dreact` list turns by); `compacting`, `finalizing` and
 * `persisting` are the state query's alone (a compaction and the persist child show as their own
 * executions meanwhile).
 */
import {
  CancellationScope,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { addUsage, ZERO_USAGE } from '../../core/model/usage';
import { DEFAULT_MAX_ROUNDS } from '../../core/turn/ids';
import { turnRefOf } from '../../core/turn/turn-ref-of';
import type { TurnRef } from '../../core/turn/ref';
import type { AgentRef } from '../../core/agents/ref';
import { normaliseEventText } from '../../core/text';
import type { TurnInput, TurnStatus, Usage, UserEvent } from '../../core/turn/contracts';
import type { TurnPlacement } from '../../core/turn/activity-contracts';
import { IterationBudget } from '../../core/turn/budget';
import {
  deciderName,
  decisionProblem,
  type ApprovalDecision,
  type PendingApproval,
} from '../../core/governance/approval';
import {
  cancelSignal,
  decideToolCallUpdate,
  followupSignal,
  pendingApprovalsQuery,
  runningSubagentsQuery,
  slotGrantedSignal,
  steerSignal,
  turnStateQuery,
  TurnStatusKey,
  type RunningSubagent,
} from '../../contract/definitions';
import { roleQueues, type RoleQueues } from '../role-queue';
import type { TurnActivities } from '../../activities/turn-activities';
import type { CancelRequest } from '../../core/turn/cancellation';
import { cancelledBy } from '../../core/turn/cancelled-by';
import { SHORT_STEP } from './activity-options';
import { turnMetrics } from '../metrics';

export type { TurnRun, TurnStatusWriter } from './run-types';
import type { TurnRun, TurnStatusWriter } from './run-types';

const { recordTurnCancellation } = proxyActivities<TurnActivities>(SHORT_STEP);

function visible(value: TurnStatus): void {
  upsertSearchAttributes([{ key: TurnStatusKey, value }]);
}

/**
 * The turn failed: findable in Temporal UI (TurnStatus = failed). Needs no run — a turn whose input
 * could not even open its run is marked too; the state query's status stays as it was.
 */
export function markTurnFailed(): void {
  visible('failed');
}

/** Usage ledger of the turn for Temporal UI (current details). */
function usageLine(u: Usage): string {
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const ratio = prompt === 0 ? 0 : u.cacheReadTokens / prompt;
  return `usage: input ${u.inputTokens} · cache write ${u.cacheWriteTokens} · cache read ${u.cacheReadTokens} (${(ratio * 100).toFixed(1)}%) · output ${u.outputTokens}`;
}

/** The turn's run state; registers the turn's signal and query handlers (call it first, once). */
export function turnRun(input: TurnInput): TurnRun {
  const { conversationId, turnId, turnIndex } = input;
  const workflowId = workflowInfo().workflowId;
  // The turn and its client's overrides, the one per-turn shape of its activities' inputs.
  const ref = turnRefOf(input);
  let turn: TurnRef = ref;
  const budget = new IterationBudget(ref.overrides?.maxRounds ?? DEFAULT_MAX_ROUNDS);
  const pending: UserEvent[] = [];
  const seenMessages = new Set<string>([input.prompt.messageId]);
  let usage = ZERO_USAGE;
  let status: TurnStatus = 'running';
  let steerRequested = false;
  let inflight: CancellationScope | null = null;
  /** The finalize round's scope: a cancel stops it, a second steer does not. */
  let finalizing: CancellationScope | null = null;
  let cancelRequest: CancelRequest | undefined;
  let recorded: Promise<void> = Promise.resolve();
  let slotGranted = false;
  let queuePosition: number | undefined;
  let agent: AgentRef | undefined;
  let placement: TurnPlacement | undefined;
  // Temporal UI's current details: the turn's line, and a line per activity waiting for a worker of
  // its role (workflows/role-queue.ts). Until loadContext answered, no role queue is known.
  let shown = '';
  let roles: RoleQueues = roleQueues(undefined);
  const details = (text?: string) => {
    if (text !== undefined) shown = text;
    const waiting = roles.waiting();
    setCurrentDetails(waiting.length > 0 ? `${shown}\n\n${waiting.join('\n')}` : shown);
  };

  const accept = (raw: UserEvent): boolean => {
    // A signal cannot be refused: its text is normalised (core/text.ts), so an event never wedges
    // the turn's rounds and a steer always arrives; a payload without text is dropped. Data only,
    // no new command: no patch.
    const event = normaliseEventText(raw);
    if (!event) {
      log.warn('dropping a user event without text', { messageId: String(raw?.messageId) });
      return false;
    }
    if (event.targetTurnId && event.targetTurnId !== turnId) {
      log.info('ignoring event addressed to another turn', {
        messageId: event.messageId,
        targetTurnId: event.targetTurnId,
      });
      return false;
    }
    if (seenMessages.has(event.messageId)) return false;
    seenMessages.add(event.messageId);
    pending.push(event);
    return true;
  };
  setHandler(followupSignal, (event) => {
    if (accept(event)) budget.grantFollowup();
  });
  setHandler(steerSignal, (event) => {
    if (!accept(event)) return;
    steerRequested = true;
    inflight?.cancel();
  });
  // A cancel (core/turn/cancellation.ts): recorded in the timeline first, so the round it interrupts
  // says who cancelled it (not "a steer"), then the in-flight work is cancelled; the loop stops at
  // its next step and the close persists the turn as `cancelled`. The first cancel wins; one that
  // arrives while the turn persists is too late. Patched: a turn that ran code without this handler
  // and got a `cancel` signal (dropped then) replays without it.
  setHandler(cancelSignal, async (raw) => {
    if (cancelRequest || status === 'persisting' || status === 'completed') return;
    if (!patched('turn-cancel')) return;
    // A signal cannot be refused: a payload that does not parse still cancels, by "unknown". Required
    // here, not imported: its schema (and the block schemas beside it) is built in the turns a
    // cancel reaches, not in every turn instance.
    const { CancelRequestSchema } =
      require('../../core/turn/cancellation') as typeof import('../../core/turn/cancellation');
    const parsed = CancelRequestSchema.safeParse(raw);
    const request: CancelRequest = parsed.success ? parsed.data : { by: 'unknown' };
    cancelRequest = request;
    recorded = CancellationScope.nonCancellable(() =>
      recordTurnCancellation.executeWithOptions({ summary: `record ${turnId} ${cancelledBy(request)}`.slice(0, 160) }, [
        { conversationId, turnId, request },
      ]),
    );
    await recorded;
    inflight?.cancel();
    finalizing?.cancel();
  });
  setHandler(slotGrantedSignal, () => {
    slotGranted = true;
  });
  setHandler(turnStateQuery, () => ({
    turnId,
    round: budget.used,
    maxRounds: budget.max,
    reactiveBonus: budget.bonus,
    status,
    pendingEvents: pending.length,
    steered: steerRequested,
    ...(cancelRequest ? { cancelled: cancelRequest } : {}),
    usage,
    ...(status === 'queued' && queuePosition !== undefined ? { queuePosition } : {}),
  }));

  // A person's decision on a waiting call, straight to this workflow (docs/governance.md): its
  // validator keeps an unknown or decided call, a malformed edit and a principal without the
  // `approve` scope out of history.
  const approvals = { pending: new Map<string, PendingApproval>(), decided: new Map<string, ApprovalDecision>() };
  setHandler(
    decideToolCallUpdate,
    (args) => {
      const decision: ApprovalDecision = {
        callId: args.callId,
        decision: args.decision,
        by: deciderName(args.principal),
        ...(args.reason ? { reason: args.reason } : {}),
        ...(args.decision === 'edit' && args.params ? { params: args.params } : {}),
      };
      approvals.decided.set(args.callId, decision);
      return decision;
    },
    {
      validator: (args) => {
        const { pending, decided } = approvals;
        const problem = decisionProblem(args, new Set(pending.keys()), new Set(decided.keys()));
        if (problem) throw new Error(problem);
      },
      description: 'Approve, deny or edit a tool call that waits for a person (callId, decision, reason, params)',
    },
  );
  setHandler(pendingApprovalsQuery, () => [...approvals.pending.values()]);
  // A client reaches a subagent's waiting calls from the parent through this (client/approvals.ts).
  const subagents = new Map<string, RunningSubagent>();
  setHandler(runningSubagentsQuery, () => [...subagents.values()]);

  // The one writer of the status and of the TurnStatus search attribute.
  /** Tool calls between their approval request and their decision. */
  let waitingCalls = 0;
  const writer: TurnStatusWriter = {
    queued(position) {
      status = 'queued';
      queuePosition = position;
      visible('queued');
    },
    requeued(position) {
      queuePosition = position;
    },
    granted() {
      status = 'running';
      queuePosition = undefined;
      visible('running');
    },
    compacting(line) {
      status = 'compacting';
      details(`**${turnId}** — ${line}\n\n${usageLine(usage)}`);
    },
    compacted() {
      status = 'running';
    },
    approvalWait(delta) {
      waitingCalls += delta;
      const waiting = waitingCalls > 0;
      visible(waiting ? 'awaiting_approval' : 'running');
      status = waiting ? 'awaiting_approval' : 'running';
    },
    finalizing() {
      status = 'finalizing';
    },
    persisting() {
      status = 'persisting';
    },
    completed() {
      status = 'completed';
      visible('completed');
    },
    cancelled() {
      status = 'cancelled';
      visible('cancelled');
    },
  };

  return {
    input,
    conversationId,
    turnId,
    turnIndex,
    workflowId,
    model: input.options.model ?? {},
    ref,
    get turn() {
      return turn;
    },
    budget,
    metrics: turnMetrics(),
    status: writer,
    get usage() {
      return usage;
    },
    addUsage(u) {
      usage = addUsage(usage, u);
    },
    get agent() {
      return agent;
    },
    withAgent() {
      if (agent) return { agent };
      return {};
    },
    get roles() {
      return roles;
    },
    get placement() {
      return placement;
    },
    opened(ctx) {
      agent = ctx.agent;
      turn = turnRefOf(input, agent);
      placement = ctx.placement;
      roles = roleQueues(ctx.placement, () => details());
    },
    get steerRequested() {
      return steerRequested;
    },
    steerEvent: () => (steerRequested ? [...pending].reverse().find((e) => e.kind === 'steer') : undefined),
    steerTaken() {
      steerRequested = false;
    },
    get cancelRequest() {
      return cancelRequest;
    },
    cancelRecorded: () => recorded,
    takeEvents: () => pending.splice(0),
    followupWaiting: () => pending.some((e) => e.kind === 'followup'),
    get slotGranted() {
      return slotGranted;
    },
    approvals,
    subagents,
    async cancellable<T>(fn: () => Promise<T>, opts: { cancelOnly?: boolean } = {}): Promise<T | undefined> {
      // Cancelled meanwhile (during a compaction, between two calls): nothing more runs.
      if (cancelRequest) return undefined;
      const scope = new CancellationScope();
      if (opts.cancelOnly) finalizing = scope;
      else inflight = scope;
      try {
        return await scope.run(fn);
      } catch (err) {
        if (isCancellation(err) && (cancelRequest || (steerRequested && !opts.cancelOnly))) return undefined;
        throw err;
      } finally {
        if (opts.cancelOnly) finalizing = null;
        else inflight = null;
      }
    },
    details,
    usageLine: () => usageLine(usage),
  };
}
