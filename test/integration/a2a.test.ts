/**
 * A2A on the real stack (worker on the dev Temporal server, Postgres, the HTTP gateway): the agent
 * card of an agent file the worker loaded, behind the gateway's API keys.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { copyFileSync, mkdtempSync } from 'node:fs';
import type { AgentCard } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import { createTestStack, type TestStack } from '../support/stack';
import { startGateway } from '../../apps/gateway/server';

let stack: TestStack;
let gw: Awaited<ReturnType<typeof startGateway>>;

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-agents-'));
  copyFileSync(path.join(__dirname, '..', 'fixtures', 'agents', 'narrow.yaml'), path.join(dir, 'narrow.yaml'));
  stack = await createTestStack('a2a');
  await stack.startWorker({ agents: { dir } });
  gw = await startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: ['a2a-key'],
    port: 0,
    pollMs: 200,
    log: () => undefined,
  });
});

after(async () => {
  await gw?.close();
  await stack?.teardown();
});

test('agent card: per agent, from the agent file, with the JSON-RPC endpoint; keys required; unknown agent 404', async () => {
  const url = `${gw.url}/v1/a2a/narrow/.well-known/agent-card.json`;
  const res = await fetch(url, { headers: { 'x-api-key': 'a2a-key' } });
  assert.equal(res.status, 200);
  const card = (await res.json()) as AgentCard;
  assert.equal(card.name, 'narrow');
  assert.equal(card.description, 'Reads and writes notes only.');
  assert.equal(card.supportedInterfaces[0]?.url, `${gw.url}/v1/a2a/narrow`);
  assert.equal(card.skills[0]?.id, 'narrow');
  assert.ok(card.skills.length > 1, 'one skill per tool of the agent');
  assert.equal((await fetch(url)).status, 401);
  const unknown = await fetch(`${gw.url}/v1/a2a/nobody/.well-known/agent-card.json`, {
    headers: { 'x-api-key': 'a2a-key' },
  });
  assert.equal(unknown.status, 404);
});
