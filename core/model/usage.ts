/**
 * Adding up a call's usage (Usage, core/model/usage-schema.ts): the zero and the sum. Zod-free, so a
 * workflow that only adds usage (the turn, its subagent steps, a background task) does not build
 * provider.ts's schemas in every workflow instance it starts (issue 42: module evaluation is per
 * workflow instance in the reusable V8 context; provider.ts's was ~0.25 s of the workflow thread
 * per 300 instances under the peers bench). Pure.
 */
import type { Usage } from './usage-schema';

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  const reasoning =
    a.reasoningTokens !== undefined || b.reasoningTokens !== undefined
      ? { reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) }
      : {};
  const hour =
    a.cacheWrite1hTokens !== undefined || b.cacheWrite1hTokens !== undefined
      ? { cacheWrite1hTokens: (a.cacheWrite1hTokens ?? 0) + (b.cacheWrite1hTokens ?? 0) }
      : {};
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    ...reasoning,
    ...hour,
  };
}
