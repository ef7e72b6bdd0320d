/**
 * A fallback entry's own settings over the request's (the primary's), as a middleware: its output
 * budget and temperature; a model without budgeted thinking gets no thinking request (the
 * primary's request may carry one), and the prior rounds' thinking blocks go only where the
 * adapter can send them (Anthropic drops them with thinking off; OpenAI-compatible servers never
 * get them). The entry's output budget is the provider's declared `maxTokens` too, so the spend
 * cap reserves at it when the chain moves on (fallback.ts, spend.ts).
 */
import type { ProviderMiddleware } from '../../../core/model/middleware';
import type { ModelAbilities } from '../../../core/model/abilities';
import type { FallbackModel } from '../../../core/model/config';

/** The entry's settings, or undefined when it changes nothing of the request. */
export function entrySettings(entry: FallbackModel, abilities: ModelAbilities): ProviderMiddleware | undefined {
  const noThinking = abilities.thinking !== 'budget';
  if (entry.maxTokens === undefined && entry.temperature === undefined && !noThinking) return undefined;
  return {
    ...(entry.maxTokens !== undefined ? { overrideMaxTokens: () => entry.maxTokens } : {}),
    transformParams: (request) => ({
      ...request,
      ...(entry.maxTokens !== undefined ? { maxTokens: entry.maxTokens } : {}),
      ...(entry.temperature !== undefined ? { temperature: entry.temperature } : {}),
      ...(noThinking && request.thinking !== undefined ? { thinking: { disabled: true as const } } : {}),
    }),
  };
}
