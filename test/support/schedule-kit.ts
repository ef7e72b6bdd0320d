/**
 * What the schedule tests share: the scripted default model their workers run (one answer, a
 * title, a latency per model call), a gateway over a test stack on loopback, and a JSON caller of
 * the gateway API with one key.
 */
import type { ModelConfig } from '../../core/model/config';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { complete, type TestStack } from './stack';

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

/** The gateway over `stack` on 127.0.0.1 (a free port), scripted models allowed, quiet. */
export function startStackGateway(stack: TestStack): Promise<RunningGateway> {
  return startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    port: 0,
    host: '127.0.0.1',
    log: () => undefined,
  });
}
