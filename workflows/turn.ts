/**
 * TurnWorkflow: one agent turn, Reason → Act → Observe over the timeline.
 * History carries ids, refs, scalar decisions and bounded previews only; the timeline lives
 * in Postgres and every round's model call and tool call is an activity.
 */
import {
  CancellationScope,
  executeChild,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  setCurrentDetails,
  log,
  patched,
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
} from '@temporalio/workflow';
import { callStages, scheduleToolCall } from '../core/tools/call-plan';
import type { TurnActivities } from '../activities/turn-activities';
import { addUsage, ZERO_USAGE } from '../core/model/provider';
import { DEFAULT_MAX_ITERATIONS } from '../core/turn/ids';
import type {
  CompletionPath,
  RoundOutcome,
  ToolCallPlan,
  ToolInput,
  ToolOutcome,
  TurnInput,
  TurnResult,
  TurnState,
  UserEvent,
} from '../core/turn/contracts';
import { IterationBudget } from '../core/turn/budget';
import { afterRound, nextRound, type RoundResult } from '../core/turn/next-step';
import { followupSignal, SHORT_WORKFLOW_TASK_TIMEOUT, steerSignal, turnStateQuery, TurnStatusKey } from './definitions';
import { PersistTurnWorkflow } from './persist';
import { compactionStep } from './compaction-step';

// Tool selection happens only with a large catalogue: the threshold and pinned tools are core's.
import { PINNED_TOOLS, TOOL_SELECTION_THRESHOLD } from '../core/tools/selection';

// Short Postgres-only steps: a timeout that fits the work, so a killed worker costs seconds.
const { loadContext, finalizeTurn, recordTurnFailure, recordToolFailure, appendToolResults } =
  proxyActivities<TurnActivities>({
    startToCloseTimeout: '15 seconds',
    retry: { initialInterval: '500ms', maximumAttempts: 10 },
  });

// The turn's first step (turn row, header and prompt blocks) as a LOCAL activity: Postgres only,
// no server round trip before the first model call (histories from before it used the activity).
const { loadContext: loadContextLocally } = proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

// One small model call each (title, tool selection): they heartbeat while the call runs.
const { gate, selectTools } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
});

/**
 * A decision round is retried for as long as its failures are transient — 429 / 529 / 5xx, cut
 * streams, a killed worker (each kill costs every round in flight one attempt) — within 30 minutes
 * in all; non-retryable errors (a 400, a bad key) fail it at once. A cap of 6 attempts let the
 * chaos storm fail 2 of 20 turns (kills and injected faults landing on the same round).
 */
const { decide, decideNative } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '10 minutes',
  scheduleToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 seconds',
  retry: {
    initialInterval: '200ms',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: Infinity,
  },
});

const { synthesizeAnswer } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * Tool calls: `runTool` or a tool's own activity, by the name in the call plan. Every call passes
 * the tool's own timeouts and RetryPolicy (core/tools/call-plan.ts); these are the fallbacks.
 */
const toolActivities = proxyActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * Short Postgres-only tools (react.read / write / plan / hide) as LOCAL activities: run by the
 * worker executing this workflow task, no server round trip; retried under the tool's policy and
 * recorded in history as markers. Each call passes its own timeout, retry policy and summary.
 */
const localToolActivities = proxyLocalActivities<Record<string, (input: ToolInput) => Promise<ToolOutcome>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});

/**
 * A steer's finalize round must not overlap the cancelled activity (its last stream deltas and
 * partial blocks land first). Histories recorded before this patch used TRY_CANCEL.
 */
function cancelOptions(): { cancellationType?: ActivityCancellationType } {
  return patched('steer-waits-for-cancel')
    ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED }
    : {};
}

/** Usage ledger of the turn for Temporal UI (current details). */
function usageLine(u: TurnState['usage']): string {
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const ratio = prompt === 0 ? 0 : u.cacheReadTokens / prompt;
  return `usage: input ${u.inputTokens} · cache write ${u.cacheWriteTokens} · cache read ${u.cacheReadTokens} (${(ratio * 100).toFixed(1)}%) · output ${u.outputTokens}`;
}

/** The failure and its causes in one bounded line (ActivityFailure → ApplicationFailure → …). */
function failureMessage(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 4; e = (e as { cause?: unknown }).cause)
    parts.push(e.message);
  const line = parts.filter((m) => m !== '').join(' ← ') || String(err);
  return line.length <= 2000 ? line : `${line.slice(0, 1999)}…`;
}

export async function TurnWorkflow(input: TurnInput): Promise<TurnResult> {
  try {
    return await runTurn(input);
  } catch (err) {
    // A failed turn is findable in Temporal UI (TurnStatus = failed) and in the turns table;
    // the failure itself propagates.
    if (!isCancellation(err)) {
      upsertSearchAttributes([{ key: TurnStatusKey, value: 'failed' }]);
      if (patched('record-turn-failure')) {
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
    }
    throw err;
  }
}

/**
 * One tool call as its activity. A failure that outlives the tool's retries (or is
 * non-retryable, or a timeout) becomes the call's observation, so the model sees it and the turn
 * goes on; a steer's cancellation propagates. (Histories from before `tool-failure-observation`
 * failed the turn instead.)
 */
async function runToolCall(call: ToolCallPlan, input: ToolInput): Promise<ToolOutcome> {
  const scheduled = scheduleToolCall(call);
  try {
    if (scheduled.local && patched('local-postgres-tools')) {
      const { summary, startToCloseTimeout, retry } = scheduled.options;
      return await localToolActivities[scheduled.activity]!.executeWithOptions(
        { summary, startToCloseTimeout, ...(retry ? { retry } : {}), ...cancelOptions() },
        [input],
      );
    }
    const first = await toolActivities[scheduled.activity]!.executeWithOptions(
      { ...scheduled.options, ...cancelOptions() },
      [input],
    );
    // A tool with two activities (exec: launch, then await) gets the second with the same input.
    if (!scheduled.then || !patched('tool-then-activity')) return first;
    return await toolActivities[scheduled.then.activity]!.executeWithOptions(
      { ...scheduled.then.options, ...cancelOptions() },
      [input],
    );
  } catch (err) {
    if (isCancellation(err) || !patched('tool-failure-observation')) throw err;
    const cause = err instanceof ActivityFailure ? err.cause : err;
    return recordToolFailure.executeWithOptions({ summary: `record failure: ${call.summary}`.slice(0, 160) }, [
      {
        ...input,
        error: failureMessage(cause),
        ...(cause instanceof ApplicationFailure && cause.type ? { failureType: cause.type } : {}),
        ...(err instanceof ActivityFailure ? { retryState: String(err.retryState) } : {}),
      },
    ]);
  }
}

async function runTurn(input: TurnInput): Promise<TurnResult> {
  const { conversationId, turnId, turnIndex } = input;
  const workflowId = workflowInfo().workflowId;
  const budget = new IterationBudget(input.options.maxIterations ?? DEFAULT_MAX_ITERATIONS);
  const pending: UserEvent[] = [];
  const seenMessages = new Set<string>([input.prompt.messageId]);
  let usage = ZERO_USAGE;
  let status: TurnState['status'] = 'running';
  let steerRequested = false;
  let inflight: CancellationScope | null = null;

  const accept = (event: UserEvent): boolean => {
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
  setHandler(turnStateQuery, () => ({
    turnId,
    round: budget.used,
    maxIterations: budget.max,
    reactiveBonus: budget.bonus,
    status,
    pendingEvents: pending.length,
    steered: steerRequested,
    usage,
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

  const load = patched('local-load-context') ? loadContextLocally : loadContext;
  const context = await load.executeWithOptions({ summary: `load context ${turnId}` }, [
    { conversationId, turnId, turnIndex, workflowId, prompt: input.prompt, maxIterations: input.options.maxIterations },
  ]);
  // Histories recorded before the worker resolved the budget return no maxIterations: same default.
  if (context.maxIterations !== undefined) budget.rebase(context.maxIterations);
  // The gate titles a new conversation once; a large tool catalogue is narrowed for this turn.
  // (Both fields are absent in histories recorded before these steps existed: nothing runs.)
  const brief = input.prompt.text.slice(0, 2000);
  // The title call runs beside the first round: nothing a round renders depends on it (its block is
  // hidden bookkeeping), so a new conversation's first answer does not wait for its title. Its
  // outcome, a failure included, is awaited before the turn persists. (Histories from before
  // `gate-beside-first-round` awaited it here.)
  let titled: Promise<Error | undefined> = Promise.resolve(undefined);
  if (context.needsTitle) {
    const titling = gate.executeWithOptions({ summary: `gate: title conversation ${conversationId}` }, [
      { conversationId, turnId, prompt: brief, model: input.options.model },
    ]);
    if (patched('gate-beside-first-round'))
      titled = titling.then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
    else await titling;
  }
  if ((context.toolCount ?? 0) > TOOL_SELECTION_THRESHOLD) {
    await selectTools.executeWithOptions({ summary: `select tools (${context.toolCount} registered)` }, [
      { conversationId, turnId, prompt: brief, model: input.options.model, pinned: PINNED_TOOLS },
    ]);
  }

  const native = input.options.model.protocol === 'native';
  const twoPhase = native && input.options.model.answerSynthesis === true;
  const decideActivity = native ? decideNative : decide;
  let answer = '';
  let completionPath: CompletionPath | undefined;
  let failures = 0;
  /** Events handed to a decide call stay here until that call succeeds (appends are idempotent). */
  let unconfirmed: UserEvent[] = [];

  const followupIn = (events: UserEvent[]) => events.some((e) => e.kind === 'followup');

  // Compaction before a round that would not fit (workflows/compaction-step.ts).
  const contextMaxTokens = input.options.contextMaxTokens;
  const compaction = compactionStep({
    workflowId,
    conversationId,
    turnId,
    model: input.options.model,
    onStart: (line) => {
      status = 'compacting';
      setCurrentDetails(`**${turnId}** — ${line}\n\n${usageLine(usage)}`);
    },
    onEnd: () => {
      status = 'running';
    },
  });
  const withinBudget = compaction.withinBudget;

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
    setCurrentDetails(
      `**${turnId}** — ${finalize ? 'finalize after steer' : `round ${round}/${budget.max}`}\n\n${usageLine(usage)}`,
    );

    const decideInput = {
      conversationId,
      turnId,
      turnIndex,
      round,
      mode: finalize ? ('finalize' as const) : ('normal' as const),
      events: unconfirmed,
      iteration: budget.snapshot(),
      model: input.options.model,
      ...(twoPhase ? { answerPhase: 'loop' as const } : {}),
      ...(contextMaxTokens !== undefined ? { contextMaxTokens } : {}),
    };
    const summary = finalize ? `decide finalize (steer) round ${round}` : `decide round ${round}`;
    const decideOnce = () =>
      finalize
        ? decideActivity.executeWithOptions({ summary }, [decideInput])
        : cancellable(() => decideActivity.executeWithOptions({ summary, ...cancelOptions() }, [decideInput]));
    const outcome: RoundOutcome | undefined = await withinBudget(decideOnce);
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
        // Each call is its own activity with the tool's timeout and retries. Consecutive read-only
        // calls of one round (native parallel calls, accepted multi-action explorations) run
        // concurrently: their results are held and appended in call order once all are done (or a
        // steer cancelled the rest), so one failure loses nothing and the timeline reads in call
        // order. Other calls run one after another (core/tools/call-plan.ts callStages).
        const calls: ToolCallPlan[] =
          outcome.kind === 'tool'
            ? [{ callId: outcome.callId, toolId: outcome.toolId, summary: outcome.summary }]
            : outcome.calls;
        const toolInput = (call: ToolCallPlan, heldForBatch: boolean): ToolInput => ({
          conversationId,
          turnId,
          callId: call.callId,
          toolId: call.toolId,
          ...(heldForBatch ? { heldForBatch } : {}),
        });
        let interrupted = false;
        for (const stage of callStages(calls)) {
          if (stage.length > 1 && patched('concurrent-tool-calls')) {
            // Every call settles (finished, or its cancellation completed) before the batch is appended,
            // so no result arrives after it.
            interrupted =
              (await cancellable(async () => {
                const settled = await Promise.allSettled(stage.map((call) => runToolCall(call, toolInput(call, true))));
                const failed = settled.find((r) => r.status === 'rejected');
                if (failed) throw failed.reason;
                return settled;
              })) === undefined;
            await appendToolResults.executeWithOptions(
              { summary: `append ${stage.length} tool results in call order` },
              [{ conversationId, turnId, callIds: stage.map((c) => c.callId) }],
            );
          } else {
            for (const call of stage) {
              interrupted = (await cancellable(() => runToolCall(call, toolInput(call, false)))) === undefined;
              if (interrupted) break;
            }
          }
          if (interrupted) break;
        }
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
  }

  if (completionPath !== 'complete' && completionPath !== 'exit' && completionPath !== 'steer_finalize') {
    const closing = await finalizeTurn.executeWithOptions({ summary: `finalize ${turnId} (${completionPath})` }, [
      { conversationId, turnId, turnIndex, answer, completionPath, rounds: budget.used, usage },
    ]);
    answer = closing.answer;
  }

  if (twoPhase && completionPath !== 'exit') {
    // Phase two: one streamed answer over the trace; the loop's answer is the fallback.
    const synth = await synthesizeAnswer.executeWithOptions({ summary: `synthesize answer ${turnId}` }, [
      { conversationId, turnId, turnIndex, loopAnswer: answer, model: input.options.model },
    ]);
    answer = synth.answer;
    usage = addUsage(usage, synth.usage);
  }

  const titleFailure = await titled;
  if (titleFailure) throw titleFailure;
  status = 'persisting';
  upsertSearchAttributes([{ key: TurnStatusKey, value: 'persisting' }]);
  await executeChild(PersistTurnWorkflow, {
    workflowId: `${workflowId}/persist`,
    args: [{ conversationId, turnId, turnIndex, answer, completionPath, rounds: budget.used, usage }],
    workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `persist ${turnId} timeline`,
  });
  status = 'completed';
  upsertSearchAttributes([{ key: TurnStatusKey, value: 'completed' }]);
  setCurrentDetails(`**${turnId}** — completed (${completionPath}) after ${budget.used} rounds\n\n${usageLine(usage)}`);
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
    leftoverEvents: pending.splice(0),
  };
}
