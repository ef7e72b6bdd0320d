/**
 * The turn's side of compaction: a round whose request would not fit (`over_budget`) runs a
 * CompactionWorkflow child (`<turn workflow id>/compact/<k>`) and is decided again; a provider
 * "too long" refusal gets one forced compaction and one retry of the round. A compaction that
 * cannot help (skipped, failed, breaker open) fails the turn with a clear, non-retryable message
 * instead of looping.
 */
import { ActivityFailure, ApplicationFailure, executeChild } from '@temporalio/workflow';
import { addUsage, ZERO_USAGE } from '../../core/model/usage';
import type { Usage } from '../../core/turn/contracts';
import type { CompactionReason, DecideOutcome, RoundOutcome } from '../../core/turn/activity-contracts';
import { CompactionWorkflow } from '../compaction';
import { SHORT_WORKFLOW_TASK_TIMEOUT } from '../../contract/definitions';
import type { TurnRun } from './run';

/** Compactions one round may run before the turn gives up on its budget. */
const MAX_COMPACTIONS_PER_ROUND = 2;

interface Over {
  estimate: number;
  budget: number;
  systemTokens: number;
}

export interface CompactionStep {
  /** Runs a decide call, compacting first when it reports over_budget or the provider refuses the length. */
  withinBudget(decideOnce: () => Promise<DecideOutcome | undefined>): Promise<RoundOutcome | undefined>;
  readonly count: number;
  readonly usage: Usage;
}

export function compactionStep(run: TurnRun): CompactionStep {
  let count = 0;
  let usage = ZERO_USAGE;

  const compact = async (reason: CompactionReason, over: Over): Promise<void> => {
    count += 1;
    const compactionId = `${run.workflowId}/compact/${count}`;
    run.status.compacting(`compacting (${reason}: ${over.estimate} > ${over.budget} tokens)`);
    const result = await executeChild(CompactionWorkflow, {
      workflowId: compactionId,
      workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
      args: [
        {
          compactionId,
          reason,
          budget: over.budget,
          estimate: over.estimate,
          systemTokens: over.systemTokens,
          turn: run.turn,
          ...(run.placement ? { placement: run.placement } : {}),
        },
      ],
      staticSummary: `compact ${reason === 'context_length' ? 'after a context-limit refusal' : 'before the round'} (${over.estimate} > ${over.budget} tokens)`,
    });
    run.status.compacted();
    if (result.status === 'compacted') {
      usage = addUsage(usage, result.usage);
      return;
    }
    const why =
      result.status === 'breaker_open'
        ? `compaction is stopped for this conversation: its last ${result.failures} compactions failed`
        : result.status === 'skipped'
          ? `compaction could not reduce the context (${result.reason})`
          : `compaction failed (${result.failures} in a row): ${result.error}`;
    throw ApplicationFailure.nonRetryable(
      `the conversation no longer fits the context budget of ${over.budget} tokens and ${why}`,
      'ContextOverBudget',
    );
  };

  return {
    get count() {
      return count;
    },
    get usage() {
      return usage;
    },
    async withinBudget(decideOnce) {
      let forced = false;
      for (let pass = 0; ; pass++) {
        let outcome: DecideOutcome | undefined;
        try {
          outcome = await decideOnce();
        } catch (err) {
          const over = contextLengthOf(err);
          if (!over || forced) throw err;
          forced = true;
          await compact('context_length', over);
          continue;
        }
        if (outcome?.kind !== 'over_budget') return outcome;
        if (pass >= MAX_COMPACTIONS_PER_ROUND) {
          throw ApplicationFailure.nonRetryable(
            `the context is still over its budget after ${pass} compactions (${outcome.estimate} > ${outcome.budget} tokens)`,
            'ContextOverBudget',
          );
        }
        await compact('over_budget', outcome);
      }
    },
  };
}

/** A provider context-length refusal of a decide call, with the round's estimate. */
function contextLengthOf(err: unknown): Over | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== 'Provider.context_length') return undefined;
  const d = (cause.details?.[0] ?? {}) as Partial<Over>;
  return { estimate: d.estimate ?? 0, budget: d.budget ?? 0, systemTokens: d.systemTokens ?? 0 };
}
