/**
 * TurnWorkflow: one agent turn, Reason → Act → Observe over the timeline.
 * History carries ids, refs, scalar decisions and bounded previews only; the timeline lives
 * in Postgres and every round's model call and tool call is an activity.
 */
import {
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  setCurrentDetails,
  log,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turn-activities';
import { addUsage, ZERO_USAGE } from '../core/model/provider';
import { DEFAULT_MAX_ROUNDS } from '../core/turn/ids';
import { turnRefOf } from '../core/turn/turn-ref-of';
import { DEFAULT_AGENT_NAME } from '../core/agents/ref';
import { normaliseEventText } from '../core/text';
import type { CompletionPath, TurnInput, TurnResult, TurnState, UserEvent } from '../core/turn/contracts';
import type { RoundOutcome } from '../core/turn/activity-contracts';
import type { ToolCallPlan } from '../core/tools/call-plan';
import type { ModelConfig } from '../core/model/config';
import { IterationBudget } from '../core/turn/budget';
import { afterRound, nextRound, type RoundResult } from '../core/turn/next-step';
import {
  followupSignal,
  SHORT_WORKFLOW_TASK_TIMEOUT,
  slotGrantedSignal,
  steerSignal,
  turnStateQuery,
  TurnStatusKey,
} from '../contract/definitions';
import type { TurnSlotActivities } from '../activities/governance/turn-slots';
import { PersistTurnWorkflow } from './persist';
import { compactionStep } from './compaction-step';
import { toolStep } from './tool-step';
import { decideStep } from './decide-step';
import { failureMessage } from './failure';
import { roleQueues, type RoleQueues } from './role-queue';
import { turnMetrics } from './metrics';

// Tool selection happens only with a large catalogue: the threshold and pinned tools are core's.
import { PINNED_TOOLS, TOOL_SELECTION_THRESHOLD } from '../core/tools/selection';

// Short Postgres-only steps: a timeout that fits the work, so a killed worker costs seconds.
const { finalizeTurn, recordTurnFailure } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

// The turn's first step (turn row, header and prompt blocks) as a LOCAL activity: Postgres only,
// no server round trip before the first model call.
const { loadContext } = proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

// One small model call each (title, tool selection): they heartbeat while the call runs.
const { gate, selectTools } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

// Per-tenant turn concurrency (activities/governance/turn-slots.ts): Postgres and a few signals.
// Only turns of a tenant with a limit run these, so other turns' histories are unchanged.
const { releaseTurnSlot, reapTurnSlots } = proxyActivities<TurnSlotActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

const { synthesizeAnswer } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** Usage ledger of the turn for Temporal UI (current details). */
function usageLine(u: TurnState['usage']): string {
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const ratio = prompt === 0 ? 0 : u.cacheReadTokens / prompt;
  return `usage: input ${u.inputTokens} · cache write ${u.cacheWriteTokens} · cache read ${u.cacheReadTokens} (${(ratio * 100).toFixed(1)}%) · output ${u.outputTokens}`;
}

/** Whether the turn holds a concurrency slot (or a place in its tenant's queue) to give back. */
interface SlotHold {
  held: boolean;
}

/** The turn's last step when it took a slot: gives it back and lets the queue's head in (never cancelled). */
async function releaseSlot(slot: SlotHold, turnId: string): Promise<void> {
  if (!slot.held) return;
  slot.held = false;
  await CancellationScope.nonCancellable(() =>
    releaseTurnSlot.executeWithOptions({ summary: `release turn slot of ${turnId}` }, [
      { workflowId: workflowInfo().workflowId },
    ]),
  );
}

export async function TurnWorkflow(input: TurnInput): Promise<TurnResult> {
  const slot: SlotHold = { held: false };
  try {
    const result = await runTurn(input, slot);
    await releaseSlot(slot, input.turnId);
    return result;
  } catch (err) {
    // A failed turn is findable in Temporal UI (TurnStatus = failed) and in the turns table;
    // the failure itself propagates.
    if (!isCancellation(err)) {
      upsertSearchAttributes([{ key: TurnStatusKey, value: 'failed' }]);
      turnMetrics().turnFailed();
      try {
        await recordTurnFailure.executeWithOptions({ summary: `record failure of ${input.turnId}` }, [
          {
            conversationId: input.conversationId,
            turnId: input.turnId,
            turnIndex: input.turnIndex,
            workflowId: workflowInfo().workflowId,
            error: failureMessage(err),
          },
        ]);
      } catch (recordErr) {
        // The turn's own failure is what propagates; not being able to record it is logged.
        log.error('could not record the turn failure', { turnId: input.turnId, error: failureMessage(recordErr) });
      }
    }
    await releaseSlot(slot, input.turnId);
    throw err;
  }
}

async function runTurn(input: TurnInput, slot: SlotHold): Promise<TurnResult> {
  const { conversationId, turnId, turnIndex } = input;
  // No model named: the activities' worker resolves `{}` to its deployment default (never scripted).
  const model: ModelConfig = input.options.model ?? {};
  const workflowId = workflowInfo().workflowId;
  // The turn and its client's overrides, the one per-turn shape of its activities' inputs.
  const ref = turnRefOf(input);
  const budget = new IterationBudget(ref.overrides?.maxRounds ?? DEFAULT_MAX_ROUNDS);
  const pending: UserEvent[] = [];
  const seenMessages = new Set<string>([input.prompt.messageId]);
  let usage = ZERO_USAGE;
  let status: TurnState['status'] = 'running';
  let steerRequested = false;
  let inflight: CancellationScope | null = null;
  let slotGranted = false;
  let queuePosition: number | undefined;
  // Temporal UI's current details: the turn's line, and a line per activity waiting for a worker of
  // its role (workflows/role-queue.ts). Until loadContext answered, no role queue is known.
  let shown = '';
  let roles: RoleQueues = roleQueues(undefined);
  const details = (text?: string) => {
    if (text !== undefined) shown = text;
    const waiting = roles.waiting();
    setCurrentDetails(waiting.length > 0 ? `${shown}\n\n${waiting.join('\n')}` : shown);
  };
  const metrics = turnMetrics();

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
    usage,
    ...(status === 'queued' && queuePosition !== undefined ? { queuePosition } : {}),
  }));

  /** Runs an activity in a scope a steer can cancel. Returns undefined when cancelled by a steer. */
  const cancellable = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    const scope = new CancellationScope();
    inflight = scope;
    try {
      return await scope.run(fn);
    } catch (err) {
      if (isCancellation(err) && steerRequested) return undefined;
      throw err;
    } finally {
      inflight = null;
    }
  };

  // The worker resolves the turn's agent to its current version and the settings over it; from here
  // on the turn carries only the ref (the activities build the agent's view from it, never the file).
  const agentName = input.agent?.name;
  const context = await loadContext.executeWithOptions(
    {
      summary: `load context ${turnId}${agentName && agentName !== DEFAULT_AGENT_NAME ? ` (agent ${agentName})` : ''}`,
    },
    [{ turn: ref, workflowId, prompt: input.prompt, ...(input.agent ? { agent: input.agent } : {}) }],
  );
  roles = roleQueues(context.placement, () => details());
  const models = roles.timeouts;
  const onModels = <A extends unknown[], R>(
    activity: { executeWithOptions(options: ActivityOptions, args: A): Promise<R> },
    summary: string,
    args: A,
    bound: Partial<ActivityOptions> = {},
  ) =>
    roles.run('models', undefined, (placed) =>
      activity.executeWithOptions({ summary, heartbeatTimeout: models.modelsHeartbeatMs, ...bound, ...placed }, args),
    );
  metrics.turnStarted();
  // A tenant's turn concurrency limit: a queued turn waits here, durably, for `slotGranted`; after
  // position × reapSeconds it checks for turns that died holding a slot (activities/governance/turn-slots.ts).
  if (context.slot) {
    slot.held = true;
    const { granted, position, reapSeconds } = context.slot;
    if (!granted && !slotGranted) {
      status = 'queued';
      queuePosition = position;
      upsertSearchAttributes([{ key: TurnStatusKey, value: 'queued' }]);
      details(`**${turnId}** — queued (position ${position}) under the tenant's turn limit`);
      let waitSeconds = reapSeconds * Math.max(1, position);
      while (!(await condition(() => slotGranted, waitSeconds * 1000))) {
        const reap = await reapTurnSlots.executeWithOptions(
          { summary: `reap turn slots of ended turns (${turnId} waits)` },
          [{ conversationId, workflowId }],
        );
        if (reap.granted) break;
        queuePosition = reap.position;
        waitSeconds = Math.min(reapSeconds * Math.max(1, reap.position), Math.max(reapSeconds, 3600));
      }
      status = 'running';
      queuePosition = undefined;
      upsertSearchAttributes([{ key: TurnStatusKey, value: 'running' }]);
    }
  }
  // The worker resolves the budget (the agent's, its default when neither names one).
  const rounds = context.maxRounds ?? context.maxIterations;
  if (rounds !== undefined) budget.rebase(rounds);
  // Histories recorded before agents have no ref: their activities use the default agent.
  const agent = context.agent;
  const withAgent = agent ? { agent } : {};
  const turn = turnRefOf(input, agent);
  // The gate titles a new conversation once; a large tool catalogue is narrowed for this turn.
  const brief = input.prompt.text.slice(0, 2000);
  // The title call runs beside the first round: nothing a round renders depends on it (its block is
  // hidden bookkeeping), so a new conversation's first answer does not wait for its title. Its
  // outcome, a failure included, is awaited before the turn persists.
  let titled: Promise<Error | undefined> = Promise.resolve(undefined);
  if (context.needsTitle) {
    const titling = onModels(gate, `gate: title conversation ${conversationId}`, [{ turn, prompt: brief }]);
    titled = titling.then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
  }
  if ((context.toolCount ?? 0) > TOOL_SELECTION_THRESHOLD) {
    await onModels(selectTools, `select tools (${context.toolCount} registered)`, [
      { turn, prompt: brief, pinned: PINNED_TOOLS },
    ]);
  }

  const protocol = context.settings ? context.settings.protocol : model.protocol;
  const native = protocol === 'native';
  const twoPhase = native && (context.settings ? context.settings.answerSynthesis : model.answerSynthesis) === true;
  let answer = '';
  let completionPath: CompletionPath | undefined;
  let failures = 0;
  /** Events handed to a decide call stay here until that call succeeds (appends are idempotent). */
  let unconfirmed: UserEvent[] = [];

  const followupIn = (events: UserEvent[]) => events.some((e) => e.kind === 'followup');

  // Compaction before a round that would not fit (workflows/compaction-step.ts).
  const compaction = compactionStep({
    workflowId,
    turn,
    ...(context.placement ? { placement: context.placement } : {}),
    onStart: (line) => {
      status = 'compacting';
      details(`**${turnId}** — ${line}\n\n${usageLine(usage)}`);
    },
    onEnd: () => {
      status = 'running';
    },
  });
  const withinBudget = compaction.withinBudget;
  // The round's decide call (workflows/decide-step.ts).
  const decision = decideStep({
    turn,
    native,
    twoPhase,
    cancellable,
    roles,
  });
  // Which model answered which rounds: the turn result and, for Temporal UI, the current details.
  const answeredBy = () => (decision.models().length > 0 ? { models: decision.models() } : {});
  const modelsLine = () => (decision.modelLine() ? `\n\n${decision.modelLine()}` : '');
  // The round's tool calls (workflows/tool-step.ts).
  const tools = toolStep({
    conversationId,
    turnId,
    cancellable,
    ...withAgent,
    onApprovalWait: (waiting) => {
      status = waiting ? 'awaiting_approval' : 'running';
    },
    steerEvent: () => (steerRequested ? [...pending].reverse().find((e) => e.kind === 'steer') : undefined),
    roles,
  });

  // The loop's rules (steer → finalize, followups, cap, decision failures) live in core/turn/next-step.ts.
  while (completionPath === undefined) {
    const step = nextRound({
      steerRequested,
      followupQueued: followupIn(pending) || followupIn(unconfirmed),
      exhausted: budget.exhausted,
    });
    if (step.kind === 'stop') {
      completionPath = step.completionPath;
      break;
    }
    const { finalize } = step;
    if (!finalize) budget.consume();
    else status = 'finalizing';
    const round = budget.used + (finalize ? 1 : 0);
    unconfirmed = [...unconfirmed, ...pending.splice(0)];
    if (finalize) steerRequested = false;
    details(
      `**${turnId}** — ${finalize ? 'finalize after steer' : `round ${round}/${budget.max}`}\n\n${usageLine(usage)}${modelsLine()}`,
    );

    const decideOnce = decision.round({ round, finalize, events: unconfirmed, iteration: budget.snapshot() });
    metrics.roundStarted();
    const outcome: RoundOutcome | undefined = await withinBudget(decideOnce);
    metrics.roundFinished(outcome?.kind ?? 'steered');
    let result: RoundResult;
    if (outcome === undefined) {
      result = { kind: 'steered' }; // finalize next, with the events handed to the cancelled call
    } else {
      unconfirmed = [];
      usage = addUsage(usage, outcome.usage);
      if (outcome.kind === 'invalid') result = { kind: 'invalid' };
      else if (outcome.kind === 'final') {
        answer = outcome.answer; // kept as the draft when a followup continues the turn
        result = { kind: 'final', action: outcome.action };
      } else {
        const calls: ToolCallPlan[] =
          outcome.kind === 'tool'
            ? [{ callId: outcome.callId, toolId: outcome.toolId, summary: outcome.summary }]
            : outcome.calls;
        const interrupted = await tools.run(calls);
        const final = outcome.kind === 'tools' ? outcome.final : undefined;
        if (!interrupted && final) answer = final.answer;
        result = { kind: 'tools', interrupted, ...(final ? { final: { action: final.action } } : {}) };
      }
    }
    const next = afterRound(result, {
      finalize,
      failures,
      exhausted: budget.exhausted,
      followupArrived: followupIn(pending),
    });
    failures = next.failures;
    if (next.kind === 'done') completionPath = next.completionPath;
    // A spend cap refused the round's model call: the round answered so and the turn ends.
    if (outcome?.kind === 'final' && outcome.completionPath === 'budget_exceeded') completionPath = 'budget_exceeded';
  }

  if (
    completionPath !== 'complete' &&
    completionPath !== 'exit' &&
    completionPath !== 'steer_finalize' &&
    completionPath !== 'budget_exceeded'
  ) {
    const closing = await finalizeTurn.executeWithOptions({ summary: `finalize ${turnId} (${completionPath})` }, [
      { conversationId, turnId, turnIndex, answer, completionPath, rounds: budget.used, usage },
    ]);
    answer = closing.answer;
  }

  if (twoPhase && completionPath !== 'exit') {
    // Phase two: one streamed answer over the trace; the loop's answer is the fallback.
    const synth = await onModels(synthesizeAnswer, `synthesize answer ${turnId}`, [{ turn, loopAnswer: answer }], {
      startToCloseTimeout: models.modelsStartToCloseMs,
    });
    answer = synth.answer;
    usage = addUsage(usage, synth.usage);
  }

  const titleFailure = await titled;
  if (titleFailure) throw titleFailure;
  // The state query says `persisting`; the search attribute goes from running to completed in one
  // visibility update (the persist child shows as its own execution meanwhile).
  status = 'persisting';
  const persisted = await executeChild(PersistTurnWorkflow, {
    workflowId: `${workflowId}/persist`,
    args: [{ conversationId, turnId, turnIndex, answer, completionPath, rounds: budget.used, usage, ...answeredBy() }],
    workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `persist ${turnId} timeline`,
  });
  status = 'completed';
  upsertSearchAttributes([{ key: TurnStatusKey, value: 'completed' }]);
  metrics.turnCompleted(completionPath);
  details(
    `**${turnId}** — completed (${completionPath}) after ${budget.used} rounds\n\n${usageLine(usage)}${modelsLine()}`,
  );
  return {
    conversationId,
    turnId,
    turnIndex,
    workflowId,
    answer,
    completionPath,
    rounds: budget.used,
    usage,
    ...(compaction.count > 0 ? { compactions: compaction.count, compactionUsage: compaction.usage } : {}),
    ...(tools.subagents.count > 0 ? { subagents: tools.subagents.count, subagentUsage: tools.subagents.usage } : {}),
    ...(persisted.files?.length ? { files: persisted.files } : {}),
    ...answeredBy(),
    leftoverEvents: pending.splice(0),
  };
}
