/**
 * The context budget of a round: the estimate of everything the provider will receive (system
 * prompt, tool schemas, rendered timeline with its SOURCES POOL / ANNOUNCE tail), in tokens by the
 * conversation's calibrated chars-per-token ratio, against the turn's budget. The render already
 * applied the cheaper tiers (older-block truncation, TTL pruning, previews), so an estimate over
 * the budget means only a summary can help: the round returns `over_budget` without calling the
 * model and the workflow compacts. After every call the ratio is calibrated with the input tokens
 * the provider reports.
 */
import { ApplicationFailure } from '@temporalio/activity';
import {
  calibrate,
  DEFAULT_CHARS_PER_TOKEN,
  estimateTokens,
  requestCharsWithSystem,
} from '../../core/compaction/estimate';
import { ProviderError, type Usage } from '../../core/model/provider';
import type { OverBudget } from '../../core/turn/activity-contracts';
import { providerFailureType } from '../providers/errors';

export interface BudgetCheck {
  chars: number;
  ratio: number;
  calibrated: number | undefined;
  estimate: number;
  systemTokens: number;
  budget: number;
}

export function checkBudget(
  /** The conversation's calibrated chars per token (store loadCharsPerToken), if any. */
  calibrated: number | undefined,
  request: { system: unknown; messages: unknown; tools?: unknown },
  budget: number,
): BudgetCheck {
  const ratio = calibrated ?? DEFAULT_CHARS_PER_TOKEN;
  const { chars, systemChars } = requestCharsWithSystem(request);
  return {
    chars,
    ratio,
    calibrated,
    estimate: estimateTokens(chars, ratio),
    systemTokens: estimateTokens(systemChars, ratio),
    budget,
  };
}

/** The round's verdict when the request does not fit: no model call, the workflow compacts. */
export function overBudget(check: BudgetCheck): OverBudget | undefined {
  if (check.estimate <= check.budget) return undefined;
  return {
    kind: 'over_budget',
    estimate: check.estimate,
    budget: check.budget,
    systemTokens: check.systemTokens,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };
}

/** Calibrates the conversation's ratio with the input tokens the provider billed for this request. */
export function recalibratedRatio(check: BudgetCheck, usage: Usage): number | undefined {
  const reported = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  if (reported <= 0) return undefined;
  return calibrate(check.calibrated, check.chars, reported);
}

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
