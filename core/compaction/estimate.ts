/**
 * Token estimates for the context budget, calibrated per conversation: the provider reports the
 * input tokens of every call, so the chars-per-token ratio of what this conversation actually
 * sends replaces a fixed chars/4.
 *
 * A round's budget check (checkBudget): the estimate of everything the provider will receive
 * (system prompt, tool schemas, rendered timeline with its SOURCES POOL / ANNOUNCE tail), in tokens
 * by the conversation's calibrated ratio, against the turn's budget. The render already applied
 * the cheaper tiers (older-block truncation, TTL pruning, previews), so an estimate over the budget
 * means only a summary can help: the round returns `over_budget` without calling the model and the
 * workflow compacts. After every call the ratio is recalibrated with the input tokens the provider
 * reports (recalibratedRatio). A provider's own "too long" refusal: activities/turn/context-budget.ts.
 */
import type { Usage } from '../model/provider';
import type { OverBudget } from '../turn/activity-contracts';

export const DEFAULT_CHARS_PER_TOKEN = 4;
export const DEFAULT_CONTEXT_MAX_TOKENS = 80_000;
const MIN_RATIO = 1.5;
const MAX_RATIO = 8;

/** Characters of everything the provider receives: system prompt, tool schemas, messages. */
export function requestChars(request: { system?: unknown; messages: unknown; tools?: unknown }): number {
  return JSON.stringify([request.system ?? null, request.tools ?? null, request.messages]).length;
}

/**
 * `requestChars` of the whole request and of its fixed part (system and tools, no messages), with
 * the fixed part serialised once: `[s,t,m]` is `[s,t,[]]` with `[]` replaced by `m`. The same
 * numbers as two requestChars calls (a round's context budget needs both).
 */
export function requestCharsWithSystem(request: { system?: unknown; messages: unknown; tools?: unknown }): {
  chars: number;
  systemChars: number;
} {
  const systemChars = requestChars({ system: request.system, tools: request.tools, messages: [] });
  return { chars: systemChars - 2 + JSON.stringify(request.messages).length, systemChars };
}

export function estimateTokens(chars: number, charsPerToken: number = DEFAULT_CHARS_PER_TOKEN): number {
  return Math.ceil(chars / clampRatio(charsPerToken));
}

/**
 * The next ratio after a call of `chars` characters the provider billed as `reportedTokens`
 * input tokens (uncached + cache read + cache write): an even blend with the previous ratio, so
 * one odd call cannot swing it. Unusable reports keep the previous ratio.
 */
export function calibrate(previous: number | undefined, chars: number, reportedTokens: number): number {
  const prev = clampRatio(previous ?? DEFAULT_CHARS_PER_TOKEN);
  if (!(chars > 0) || !(reportedTokens > 0)) return prev;
  const observed = clampRatio(chars / reportedTokens);
  return previous === undefined ? observed : clampRatio(prev * 0.5 + observed * 0.5);
}

function clampRatio(r: number): number {
  return Number.isFinite(r) ? Math.min(MAX_RATIO, Math.max(MIN_RATIO, r)) : DEFAULT_CHARS_PER_TOKEN;
}

/** The budget of a turn: the turn option, else the worker's DREACT_CONTEXT_MAX_TOKENS, else 80 000. */
export function resolveContextMaxTokens(option: number | undefined, env: string | undefined): number {
  if (option !== undefined) return option;
  if (env === undefined || env === '') return DEFAULT_CONTEXT_MAX_TOKENS;
  const n = Number(env);
  if (!Number.isInteger(n) || n < 1_000 || n > 2_000_000)
    throw new Error(`DREACT_CONTEXT_MAX_TOKENS must be an integer from 1000 to 2000000, got ${JSON.stringify(env)}`);
  return n;
}

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
