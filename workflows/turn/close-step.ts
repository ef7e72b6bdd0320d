/**
 * The turn's close: the finalize activity when the loop ended without an answer of its own (a
 * cancelled turn's says who cancelled it), the two-phase synthesis, the title's outcome, the persist
 * child and the turn's result — or, when the turn failed, the failure recorded in the turns table
 * (`failTurn`).
 */
import { executeChild, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { TurnActivities } from '../../activities/turn-activities';
import type { CompletionPath, TurnInput, TurnResult } from '../../core/turn/contracts';
import { SHORT_WORKFLOW_TASK_TIMEOUT } from '../../contract/definitions';
import { PersistTurnWorkflow } from '../persist';
import { failureMessage } from '../failure';
import { turnMetrics } from '../metrics';
import { SHORT_STEP } from './activity-options';
import { onModels, type OpenedTurn } from './open-step';
import type { CompactionStep } from './compaction-step';
import type { DecideStep } from './decide-step';
import type { ToolStep } from './tool-step';
import { markTurnFailed, type TurnRun } from './run';
import { cancelledBy } from '../../core/turn/cancelled-by';

const { finalizeTurn, recordTurnFailure } = proxyActivities<TurnActivities>(SHORT_STEP);

const { synthesizeAnswer } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** Completion paths whose last round answered by itself: no finalize call. */
const ANSWERED: ReadonlySet<CompletionPath> = new Set(['complete', 'exit', 'steer_finalize', 'budget_exceeded']);

/** How the loop ended. */
export interface LoopEnd {
  answer: string;
  completionPath: CompletionPath;
}

/** The steps whose counts and usage the turn result reports. */
export interface RoundSteps {
  decision: DecideStep;
  compaction: CompactionStep;
  tools: ToolStep;
}

/** Which model answered which rounds: the turn result names them, Temporal UI's details say so. */
export function modelsLine(decision: DecideStep): string {
  return decision.modelLine() ? `\n\n${decision.modelLine()}` : '';
}

export async function closeStep(
  run: TurnRun,
  opened: OpenedTurn,
  end: LoopEnd,
  steps: RoundSteps,
): Promise<TurnResult> {
  const { conversationId, turnId, turnIndex, workflowId, budget } = run;
  const { completionPath } = end;
  const { decision, compaction, tools } = steps;
  let { answer } = end;
  // A cancelled turn's record lands before its closing answer (the handler may still be writing it).
  const cancelled = run.cancelRequest;
  if (cancelled) await run.cancelRecorded();
  if (!ANSWERED.has(completionPath)) {
    const closing = await finalizeTurn.executeWithOptions({ summary: `finalize ${turnId} (${completionPath})` }, [
      {
        conversationId,
        turnId,
        turnIndex,
        answer,
        completionPath,
        rounds: budget.used,
        usage: run.usage,
        ...(cancelled ? { cancelled } : {}),
      },
    ]);
    answer = closing.answer;
  }

  if (opened.twoPhase && completionPath !== 'exit' && !cancelled) {
    // Phase two: one streamed answer over the trace; the loop's answer is the fallback.
    const synth = await onModels(
      run,
      synthesizeAnswer,
      `synthesize answer ${turnId}`,
      [{ turn: run.turn, loopAnswer: answer }],
      { startToCloseTimeout: run.roles.timeouts.modelsStartToCloseMs },
    );
    answer = synth.answer;
    run.addUsage(synth.usage);
  }

  const titleFailure = await opened.titled;
  if (titleFailure) throw titleFailure;
  const answeredBy = () => (decision.models().length > 0 ? { models: decision.models() } : {});
  // The state query says `persisting`; the search attribute goes from running to completed in one
  // visibility update (the persist child shows as its own execution meanwhile).
  run.status.persisting();
  const usage = run.usage;
  const persisted = await executeChild(PersistTurnWorkflow, {
    workflowId: `${workflowId}/persist`,
    args: [
      {
        conversationId,
        turnId,
        turnIndex,
        answer,
        completionPath,
        rounds: budget.used,
        usage,
        ...answeredBy(),
        ...(cancelled ? { cancelled } : {}),
      },
    ],
    workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `persist ${turnId} timeline`,
  });
  if (cancelled) run.status.cancelled();
  else run.status.completed();
  run.metrics.turnCompleted(completionPath);
  run.details(
    `**${turnId}** — ${cancelled ? cancelledBy(cancelled) : `completed (${completionPath})`} after ${budget.used} rounds\n\n${run.usageLine()}${modelsLine(decision)}`,
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
    leftoverEvents: run.takeEvents(),
    ...(cancelled ? { cancelled } : {}),
  };
}

/**
 * A failed turn is findable in Temporal UI (TurnStatus = failed) and in the turns table; the
 * failure itself propagates (the caller rethrows it). A cancellation records nothing.
 */
export async function failTurn(input: TurnInput, err: unknown): Promise<void> {
  markTurnFailed();
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
