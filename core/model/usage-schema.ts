/**
 * A model call's token counts (the schema and its type; core/model/provider.ts re-exports both).
 * A file of its own so that core/model/usage.ts, the zod-free sum workflows use, takes the type
 * without importing provider.ts (no import circle).
 */
import { z } from 'zod';

export const UsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  /** Of `outputTokens`, the model's reasoning (when the provider reports it apart). */
  reasoningTokens: z.number().int().nonnegative().optional(),
  /** Of `cacheWriteTokens`, those written with a one-hour lifetime (Anthropic `ttl: '1h'`: priced higher). */
  cacheWrite1hTokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;
