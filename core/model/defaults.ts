/**
 * Model defaults the worker's settings start from (core/agents/settings.ts `WorkerDefaults`) and
 * the adapters fall back to: one value each, so a round, a side call and an adapter built without
 * options ask for the same.
 */

/** Output tokens per model call when neither the worker, the agent nor the turn names a number. */
export const DEFAULT_MAX_TOKENS = 8192;
