/**
 * What the schedule tests share: the scripted default model their workers run (one answer, a
 * title, a latency per model call) and a JSON caller of the gateway API with one key (the gateway:
 * `stack.startGateway`).
 */
import type { ModelConfig } from '../../core/model/config';
import { complete } from './stack';

/** A worker's `defaultModel`: every turn answers `answer`, each model call taking `latencyMs`. */
export function scriptedAnswer(answer: string, latencyMs = 0): ModelConfig {
  return {
    provider: 'scripted',
    script: {
      rounds: [complete(answer)],
      structured: { conversation_title: { title: 'Report' } },
      latencyMs,
      chunkSize: 4_096,
      failAttempts: 0,
      summaryLatencyMs: 0,
    },
  };
}

/** `api(method, path, body?)` against the gateway at `url` with `key`: the status and the JSON body. */
export function gatewayCaller(url: () => string, key: () => string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { 'x-api-key': key(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}
