/**
 * The OpenAI SDK, loaded at its first use rather than with the worker's code (as anthropic-sdk.ts):
 * a worker that never calls an OpenAI-compatible model never pays for loading it.
 */
type Sdk = typeof import('openai');

let sdk: Sdk | undefined;

export function openaiSdk(): Sdk {
  return (sdk ??= require('openai') as Sdk);
}
