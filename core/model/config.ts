/** A turn's model settings as the client sends them: provider, model, limits, thinking, fallbacks (zod: the single source of the types). */
import { z } from 'zod';

export const ScriptSpecSchema = z.object({
  /** Responses by round (1-based within the turn); the last one repeats. */
  rounds: z.array(z.string()).min(1).max(64),
  /** Responses by round for turn N (`turns[N-1]`, 1-based turn index); a turn past the list uses `rounds`. */
  turns: z.array(z.array(z.string()).min(1).max(64)).max(64).optional(),
  /** Response used by the finalize round after a steer (default: a generic complete). */
  finalize: z.string().optional(),
  /** Characters per streamed chunk. */
  chunkSize: z.number().int().positive().max(4096).default(16),
  /** Delay between chunks (ms). */
  latencyMs: z.number().int().nonnegative().max(60_000).default(0),
  /** Fail the first N attempts of each call with a retryable error (failure injection). */
  failAttempts: z.number().int().nonnegative().max(10).default(0),
  /** Extra delay of a compaction summariser call (ms), e.g. to kill a worker during it. */
  summaryLatencyMs: z.number().int().nonnegative().max(60_000).default(0),
  /** Replies to structured calls (gate title, tool selection…) by schema name; others are refused (400). */
  structured: z.record(z.string(), z.unknown()).optional(),
});
export type ScriptSpec = z.infer<typeof ScriptSpecSchema>;

/** Extended thinking with a budget of output tokens (Anthropic; ≥ 1024). */
export const ThinkingConfigSchema = z.strictObject({ budgetTokens: z.number().int().min(1_024).max(64_000) });

/** A model a fallback chain moves on to (core/model/fallback.ts has the conditions). */
export const FallbackModelSchema = z.strictObject({
  provider: z.enum(['scripted', 'anthropic', 'openai']),
  model: z.string().optional(),
  maxTokens: z.number().int().positive().max(64_000).optional(),
  temperature: z.number().min(0).max(1).optional(),
  thinking: ThinkingConfigSchema.optional(),
  /** Named built-in script (scripted provider). */
  script: z.string().optional(),
});
export type FallbackModel = z.infer<typeof FallbackModelSchema>;

export const ModelConfigSchema = z.object({
  /** Absent: the deployment's default model (the worker's `defaultModel`), never the scripted one. */
  provider: z.enum(['scripted', 'anthropic', 'openai']).optional(),
  /** Named built-in script (scripted provider), or an inline script. */
  script: z.union([z.string(), ScriptSpecSchema]).optional(),
  model: z.string().optional(),
  maxTokens: z.number().int().positive().max(64_000).optional(),
  temperature: z.number().min(0).max(1).optional(),
  /** Decision protocol: runtime-owned text channels (default) or the provider's native tool calling. */
  protocol: z.enum(['channels', 'native']).optional(),
  /** Native mode only: run the tool loop without answer streaming, then a streamed answer-synthesis call (two-phase: tools first, then one answer-only call over the trace). */
  answerSynthesis: z.boolean().optional(),
  /** Anthropic extended thinking: its budget of output tokens. */
  thinking: ThinkingConfigSchema.optional(),
  /** Models to move on to when this one fails before answering (overload, auth, long rate limit…), in order. */
  fallbacks: z.array(FallbackModelSchema).max(4).optional(),
});
export type ModelConfig = z.infer<typeof ModelConfigSchema>;
