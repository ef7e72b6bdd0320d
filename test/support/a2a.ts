/**
 * `@a2a-js/sdk`'s client against a test gateway (test/integration/a2a.test.ts): a client of an
 * agent's card with the gateway key, messages and requests whose turns run the scripted model,
 * and what a client reads from the stream (the answer text, each item's offset).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Message, StreamResponse } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import { createTestStack, decision, thinking, type TestStack } from './stack';
import { scriptedAgents, type Script } from './agent-scripts';
import { startGateway } from '../../apps/gateway/server';

const sdk = require('@a2a-js/sdk/client') as typeof import('@a2a-js/sdk/client', {
  with: { 'resolution-mode': 'import' },
});

/** A fetch that sends `key` as the gateway's x-api-key. */
const keyed =
  (key: string): typeof fetch =>
  (url, init) =>
    fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': key } });

/** The SDK's client of `agent` at the gateway `url`, found through its card. */
export async function a2aClient(url: string, agent: string, key: string): Promise<Client> {
  const factory = new sdk.ClientFactory(
    sdk.ClientFactoryOptions.createFrom(sdk.ClientFactoryOptions.default, {
      transports: [new sdk.JsonRpcTransportFactory({ fetchImpl: keyed(key) })],
      cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl: keyed(key) }),
    }),
  );
  return factory.createFromUrl(`${url}/v1/a2a/${agent}/.well-known/agent-card.json`, '');
}

const TEXT = 'text/plain';
export function message(text: string, ids: { contextId?: string; taskId?: string } = {}): Message {
  return {
    messageId: `m-${randomUUID()}`,
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: 1,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: TEXT }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A SendMessageRequest whose turn runs the scripted model. */
export function request(text: string, rounds: string[], script: Record<string, unknown> = {}, ids = {}) {
  return {
    tenant: '',
    message: message(text, ids),
    configuration: undefined,
    metadata: {
      dreact: {
        options: {
          model: {
            provider: 'scripted',
            script: { rounds, structured: { conversation_title: { title: 'A2A' } }, ...script },
          },
        },
      },
    },
  };
}

/** A final round whose answer streams on the answer channel, chunk by chunk. */
export const streamedAnswer = (answer: string) =>
  thinking('answering') +
  decision({ action: 'complete', notes: 'answer' }) +
  `<channel:answer>${answer}</channel:answer>`;

export const textOf = (parts: Array<{ content?: { $case: string; value?: unknown } }> = []) =>
  parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');
export const seqOf = (r: StreamResponse): number =>
  (r.payload!.value as { metadata?: { dreact?: { seq: number } } }).metadata!.dreact!.seq;
/** The text a client builds from the answer artifact's chunks (append, or replace). */
export function answerText(events: StreamResponse[]): string {
  let text = '';
  for (const e of events) {
    if (e.payload?.$case !== 'artifactUpdate') continue;
    const chunk = textOf(e.payload.value.artifact?.parts);
    text = e.payload.value.append ? text + chunk : chunk;
  }
  return text;
}

/** mulberry32: the cut points are random, and the same on every run. */
export function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The gateway of a test stack serving A2A with one key (scripted models allowed). */
export function startA2aGateway(stack: TestStack, key: string) {
  return startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [key],
    port: 0,
    pollMs: 100,
    log: () => undefined,
  });
}

/** The agent card URL of one of a gateway's agents. */
export const agentCardUrl = (gatewayUrl: string, agent: string): string =>
  `${gatewayUrl}/v1/a2a/${agent}/.well-known/agent-card.json`;

/** Agent-file lines naming a remote A2A subagent at a card URL, authenticated by DREACT_TEST_A2A_KEY. */
export const remoteSubagentYaml = (name: string, url: string): string =>
  `subagents:\n  - { a2a: "${url}", name: ${name}, description: A remote agent, auth: { secret: A2A_KEY, header: x-api-key } }\n` +
  'secrets:\n  A2A_KEY: { env: DREACT_TEST_A2A_KEY }\n';

/**
 * A stack whose worker runs agents with remote A2A subagents served by the stack's own gateway:
 * the gateway first (the agent files name its card URLs), loopback opened for its port only (the
 * allow-list web_fetch and the A2A delegate read), then the worker with the agent files `files(card)`
 * returns (name → body) and the named scripts. `close()` undoes all of it.
 */
export async function startRemoteSubagentStack(
  name: string,
  key: string,
  files: (card: (agent: string) => string) => Record<string, string>,
  scripts: Record<string, Script>,
) {
  process.env.DREACT_TEST_A2A_KEY = key;
  const stack = await createTestStack(name);
  const gw = await startA2aGateway(stack, key);
  process.env.DREACT_FETCH_ALLOW_HOSTS = `127.0.0.1:${new URL(gw.url).port}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), `dreact-${name}-`));
  for (const [agent, body] of Object.entries(files((a) => agentCardUrl(gw.url, a))))
    writeFileSync(path.join(dir, `${agent}.yaml`), body);
  await stack.startWorker({ agents: { dir }, provider: scriptedAgents(scripts) });
  return {
    stack,
    gw,
    async close() {
      await gw.close();
      await stack.teardown();
      delete process.env.DREACT_FETCH_ALLOW_HOSTS;
    },
  };
}
