/**
 * The turn's opening: `loadContext` (the turn row, header and prompt blocks; the agent's version,
 * the settings and the turn's placement), the tenant's turn-slot queue, and the prelude of side
 * calls — the conversation's title beside the first round, tool selection over a large catalogue.
 * The slot it takes is given back by `releaseSlot`, the turn's last step.
 */
import {
  CancellationScope,
  condition,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { TurnActivities } from '../../activities/turn-activities';
import type { TurnSlotActivities } from '../../activities/governance/turn-slots';
import { DEFAULT_AGENT_NAME } from '../../core/agents/ref';
import type { LoadedContext } from '../../core/turn/activity-contracts';
// Tool selection happens only with a large catalogue: the threshold and pinned tools are core's.
import { PINNED_TOOLS, TOOL_SELECTION_THRESHOLD } from '../../core/tools/pinned';
import { SHORT_STEP } from './activity-options';
import type { TurnRun } from './run';

// The turn's first step (turn row, header and prompt blocks) as a LOCAL activity: Postgres only,
// no server round trip before the first model call.
const { loadContext } = proxyLocalActivities<TurnActivities>(SHORT_STEP);

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

/** Whether the turn holds a concurrency slot (or a place in its tenant's queue) to give back. */
export interface SlotHold {
  held: boolean;
}

/** What the opening resolved for the rest of the turn. */
export interface OpenedTurn {
  /** The native protocol (`decideNative`), else channels (`decide`). */
  native: boolean;
  /** Native two-phase mode: the loop's rounds do not stream an answer (a synthesis call does). */
  twoPhase: boolean;
  /** The title call's outcome (a failure included), awaited before the turn persists. */
  titled: Promise<Error | undefined>;
  /** The title call's prompt when it runs inside the turn's rounds (the decide input's `title`), not as the gate activity. */
  titleInRound?: string;
}

/** A models-role activity with the turn's models heartbeat (and `bound`), placed on the models queue. */
export function onModels<A extends unknown[], R>(
  run: TurnRun,
  activity: { executeWithOptions(options: ActivityOptions, args: A): Promise<R> },
  summary: string,
  args: A,
  bound: Partial<ActivityOptions> = {},
): Promise<R> {
  return run.roles.run('models', undefined, (placed) =>
    activity.executeWithOptions(
      { summary, heartbeatTimeout: run.roles.timeouts.modelsHeartbeatMs, ...bound, ...placed },
      args,
    ),
  );
}

export async function openStep(run: TurnRun, slot: SlotHold): Promise<OpenedTurn> {
  const { input, conversationId, turnId, workflowId, model } = run;
  // The worker resolves the turn's agent to its current version and the settings over it; from here
  // on the turn carries only the ref (the activities build the agent's view from it, never the file).
  const agentName = input.agent?.name;
  const context = await loadContext.executeWithOptions(
    {
      summary: `load context ${turnId}${agentName && agentName !== DEFAULT_AGENT_NAME ? ` (agent ${agentName})` : ''}`,
    },
    [{ turn: run.ref, workflowId, prompt: input.prompt, ...(input.agent ? { agent: input.agent } : {}) }],
  );
  // Histories recorded before agents have no ref: their activities use the default agent.
  run.opened({
    ...(context.agent ? { agent: context.agent } : {}),
    ...(context.placement ? { placement: context.placement } : {}),
  });
  run.metrics.turnStarted();
  await waitForSlot(run, slot, context);
  // The worker resolves the budget (the agent's, its default when neither names one).
  const rounds = context.maxRounds ?? context.maxIterations;
  if (rounds !== undefined) run.budget.rebase(rounds);
  // The gate titles a new conversation once; a large tool catalogue is narrowed for this turn.
  const brief = input.prompt.text.slice(0, 2000);
  // The title call runs beside the first round: nothing a round renders depends on it (its block is
  // hidden bookkeeping), so a new conversation's first answer does not wait for its title. A worker
  // whose loadContext says `titleInRound` runs it inside the round's activity (decide-step.ts): no
  // gate activity, no workflow task woken by its completion. Turns recorded before schedule the gate
  // beside round 1 (their loadContext result, in history, says nothing of it), and its outcome, a
  // failure included, is awaited before the turn persists.
  let titled: Promise<Error | undefined> = Promise.resolve(undefined);
  const titleInRound = context.needsTitle && context.titleInRound === true ? brief : undefined;
  if (context.needsTitle && titleInRound === undefined) {
    const titling = onModels(run, gate, `gate: title conversation ${conversationId}`, [
      { turn: run.turn, prompt: brief },
    ]);
    titled = titling.then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
  }
  if ((context.toolCount ?? 0) > TOOL_SELECTION_THRESHOLD) {
    await onModels(run, selectTools, `select tools (${context.toolCount} registered)`, [
      { turn: run.turn, prompt: brief, pinned: PINNED_TOOLS },
    ]);
  }
  const protocol = context.settings ? context.settings.protocol : model.protocol;
  const native = protocol === 'native';
  const twoPhase = native && (context.settings ? context.settings.answerSynthesis : model.answerSynthesis) === true;
  return { native, twoPhase, titled, ...(titleInRound !== undefined ? { titleInRound } : {}) };
}

/**
 * A tenant's turn concurrency limit: a queued turn waits here, durably, for `slotGranted`; after
 * position × reapSeconds it checks for turns that died holding a slot (activities/governance/turn-slots.ts).
 */
async function waitForSlot(run: TurnRun, slot: SlotHold, context: LoadedContext): Promise<void> {
  if (!context.slot) return;
  slot.held = true;
  const { granted, position, reapSeconds } = context.slot;
  if (granted || run.slotGranted) return;
  const { conversationId, turnId, workflowId } = run;
  run.status.queued(position);
  run.details(`**${turnId}** — queued (position ${position}) under the tenant's turn limit`);
  let waitSeconds = reapSeconds * Math.max(1, position);
  // A cancel ends the wait too (the turn then closes without a round; its queue place is released).
  while (!(await condition(() => run.slotGranted || run.cancelRequest !== undefined, waitSeconds * 1000))) {
    const reap = await reapTurnSlots.executeWithOptions(
      { summary: `reap turn slots of ended turns (${turnId} waits)` },
      [{ conversationId, workflowId }],
    );
    if (reap.granted) break;
    run.status.requeued(reap.position);
    waitSeconds = Math.min(reapSeconds * Math.max(1, reap.position), Math.max(reapSeconds, 3600));
  }
  if (run.cancelRequest && !run.slotGranted) return;
  run.status.granted();
}

/** The turn's last step when it took a slot: gives it back and lets the queue's head in (never cancelled). */
export async function releaseSlot(slot: SlotHold, turnId: string): Promise<void> {
  if (!slot.held) return;
  slot.held = false;
  await CancellationScope.nonCancellable(() =>
    releaseTurnSlot.executeWithOptions({ summary: `release turn slot of ${turnId}` }, [
      { workflowId: workflowInfo().workflowId },
    ]),
  );
}
