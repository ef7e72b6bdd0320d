/**
 * Token estimates for the context budget, calibrated per conversation: the provider reports the
 * input tokens of every call, so the chars-per-token ratio of what this conversation actually
 * sends replaces a fixed chars/4.
 */
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
