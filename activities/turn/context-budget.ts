/**
 * A provider's "too long" refusal of a round's request, with the round's context-budget estimate
 * (core/compaction/estimate.ts: checkBudget) for the forced compaction.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { BudgetCheck } from '../../core/compaction/estimate';
import { ProviderError } from '../../core/model/provider';
import { providerFailureType } from '../model/adapters/errors';

/** A provider "too long" refusal, with the round's estimate for the forced compaction. */
export function contextLengthFailure(err: unknown, check: BudgetCheck): ApplicationFailure | undefined {
  if (!(err instanceof ProviderError) || err.kind !== 'context_length') return undefined;
  return ApplicationFailure.create({
    message: `${err.message} (estimate ${check.estimate} tokens, budget ${check.budget})`,
    type: providerFailureType('context_length'),
    nonRetryable: true,
    details: [
      {
        kind: 'context_length',
        status: err.status ?? null,
        estimate: check.estimate,
        budget: check.budget,
        systemTokens: check.systemTokens,
      },
    ],
    cause: err,
  });
}
