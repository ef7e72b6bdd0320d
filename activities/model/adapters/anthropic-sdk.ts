/**
 * The Anthropic SDK, loaded at its first use rather than with the worker's code: it is ~140 ms of
 * a worker's start, and the worker loads it while `Worker.create` waits for its workflow thread
 * (workers/main.ts) — off the path from a restart to polling.
 */
type Sdk = typeof import('@anthropic-ai/sdk');

let sdk: Sdk | undefined;

export function anthropicSdk(): Sdk {
  return (sdk ??= require('@anthropic-ai/sdk') as Sdk);
}
