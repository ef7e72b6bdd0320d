/**
 * TurnWorkflow: one agent turn, Reason → Act → Observe over the timeline.
 * History carries ids, refs, scalar decisions and bounded previews only; the timeline lives
 * in Postgres and every round's model call and tool call is an activity.
 *
 * The turn's parts live beside it: its run state, handlers and status (run.ts), the opening
 * (open-step.ts: context, slot queue, title and tool selection), the round's steps (decide,
 * compaction, tools with approvals and subagents) and the close (close-step.ts). The loop's rules
 * (steer → finalize, followups, cap, decision failures) are core's (core/turn/next-step.ts); a
 * cancel (run.ts) stops the loop before its next step and the close persists the turn as
 * `cancelled` (core/turn/cancellation.ts).
 */
import { isCancellation } from '@temporalio/workflow';
import type { CompletionPath, TurnInput, TurnResult, UserEvent } from '../../core/turn/contracts';
import type { RoundOutcome } from '../../core/turn/activity-contracts';
import type { ToolCallPlan } from '../../core/tools/call-plan';
import { afterRound, nextRound, type RoundResult } from '../../core/turn/next-step';
import { turnRun, type TurnRun } from './run';
import { openStep, releaseSlot, type SlotHold } from './open-step';
import { closeStep, failTurn, modelsLine } from './close-step';
import { compactionStep } from './compaction-step';
import { decideStep } from './decide-step';
import { toolStep, type ToolStep } from './tool-step';

export async function TurnWorkflow(input: TurnInput): Promise<TurnResult> {
  const slot: SlotHold = { held: false };
  try {
    const result = await runTurn(turnRun(input), slot);
    await releaseSlot(slot, input.turnId);
    return result;
  } catch (err) {
    if (!isCancellation(err)) await failTurn(input, err);
    await releaseSlot(slot, input.turnId);
    throw err;
  }
}

async function runTurn(run: TurnRun, slot: SlotHold): Promise<TurnResult> {
  const { turnId, budget, metrics } = run;
  const opened = await openStep(run, slot);
  // Compaction before a round that would not fit; the round's decide call; the round's tool calls.
  const compaction = compactionStep(run);
  const decision = decideStep(run, opened);
  const tools = toolStep(run);

  let answer = '';
  let completionPath: CompletionPath | undefined;
  let failures = 0;
  /** Events handed to a decide call stay here until that call succeeds (appends are idempotent). */
  let unconfirmed: UserEvent[] = [];
  const followupIn = (events: UserEvent[]) => events.some((e) => e.kind === 'followup');

  while (completionPath === undefined) {
    if (run.cancelRequest) break;
    const step = nextRound({
      steerRequested: run.steerRequested,
      followupQueued: run.followupWaiting() || followupIn(unconfirmed),
      exhausted: budget.exhausted,
    });
    if (step.kind === 'stop') {
      completionPath = step.completionPath;
      break;
    }
    const { finalize } = step;
    if (!finalize) budget.consume();
    else run.status.finalizing();
    const round = budget.used + (finalize ? 1 : 0);
    unconfirmed = [...unconfirmed, ...run.takeEvents()];
    if (finalize) run.steerTaken();
    run.details(
      `**${turnId}** — ${finalize ? 'finalize after steer' : `round ${round}/${budget.max}`}\n\n${run.usageLine()}${modelsLine(decision)}`,
    );

    const decideOnce = decision.round({ round, finalize, events: unconfirmed, iteration: budget.snapshot() });
    metrics.roundStarted();
    const outcome: RoundOutcome | undefined = await compaction.withinBudget(decideOnce);
    metrics.roundFinished(outcome?.kind ?? (run.cancelRequest ? 'cancelled' : 'steered'));
    let result: RoundResult = { kind: 'steered' }; // finalize next, with the events handed to the cancelled call
    if (outcome !== undefined) {
      unconfirmed = [];
      run.addUsage(outcome.usage);
      const acted = await actOn(outcome, tools);
      result = acted.result;
      if (acted.answer !== undefined) answer = acted.answer; // a final answer is kept as the draft when a followup continues the turn
    }
    const next = afterRound(result, {
      finalize,
      failures,
      exhausted: budget.exhausted,
      followupArrived: run.followupWaiting(),
    });
    failures = next.failures;
    if (next.kind === 'done') completionPath = next.completionPath;
    // A spend cap refused the round's model call: the round answered so and the turn ends.
    if (outcome?.kind === 'final' && outcome.completionPath === 'budget_exceeded') completionPath = 'budget_exceeded';
  }
  // A cancel wins over how the loop would have ended: its record is in the timeline already.
  if (run.cancelRequest) completionPath = 'cancelled';
  if (completionPath === undefined) throw new Error('the turn loop ended without a completion path');

  return closeStep(run, opened, { answer, completionPath }, { decision, compaction, tools });
}

/** A round's outcome acted on (its tool calls run): what the loop's rules read, and the answer it gave, if any. */
async function actOn(outcome: RoundOutcome, tools: ToolStep): Promise<{ result: RoundResult; answer?: string }> {
  if (outcome.kind === 'invalid') return { result: { kind: 'invalid' } };
  if (outcome.kind === 'final') return { result: { kind: 'final', action: outcome.action }, answer: outcome.answer };
  const calls: ToolCallPlan[] =
    outcome.kind === 'tool'
      ? [{ callId: outcome.callId, toolId: outcome.toolId, summary: outcome.summary }]
      : outcome.calls;
  const interrupted = await tools.run(calls);
  const final = outcome.kind === 'tools' ? outcome.final : undefined;
  return {
    result: { kind: 'tools', interrupted, ...(final ? { final: { action: final.action } } : {}) },
    ...(!interrupted && final ? { answer: final.answer } : {}),
  };
}
