/**
 * Security suite, agents per tenant (issue 36: "every tenant sees and may run every agent"): an
 * agent file's `visibility` restricts which tenants and projects see and run it. Through the
 * gateway (real Temporal, Postgres, worker, API keys of three tenants/projects): `GET /v1/agents`
 * lists only the visible agents; a turn naming an agent the caller may not see gets exactly the
 * unknown-agent 400 (same message, a list without it) and claims nothing; the MCP server's
 * `start_turn` gets the same answer for both; and a turn that reaches the worker anyway (the client
 * API, for a conversation of a tenant that may not see the agent) fails with the unknown-agent
 * failure — the worker resolves the agent for the conversation's owner.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { claimConversation, conversationOwner, createApiKey } from '../../store/tenancy-store';
import { conversationSpace } from '../../core/tenancy/conversation-space';

let stack: TestStack;
let gw: GatewayApp;
const keys: Record<'acme' | 'globexApp' | 'globexWeb', string> = { acme: '', globexApp: '', globexWeb: '' };

before(async () => {
  stack = await createTestStack('agent_visibility');
  await stack.startWorker({
    agents: {
      definitions: [
        { name: 'acme_only', description: "Acme's agent.", visibility: { tenants: ['acme'] } },
        { name: 'globex_web', visibility: { projects: ['globex/web'] } },
        { name: 'open', description: 'Everyone may run it.' },
      ],
    },
  });
  const key = async (tenantId: string, projectId: string) =>
    (await createApiKey(stack.db.pool, { tenantId, projectId, userId: null, scopes: ['read', 'write'] })).key;
  keys.acme = await key('acme', 'web');
  keys.globexApp = await key('globex', 'app');
  keys.globexWeb = await key('globex', 'web');
  gw = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
    allowScripted: true,
    hostnames: ['gw'],
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const call = (key: string, method: string, path: string, body?: unknown) =>
  gw.fetch(
    new Request(`http://gw${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }),
  );
const scripted = (answer: string) => ({
  model: { provider: 'scripted' as const, script: { rounds: [complete(answer)] } },
});

test('GET /v1/agents lists only the agents the key’s tenant and project see', async () => {
  const names = async (key: string) =>
    ((await (await call(key, 'GET', '/v1/agents')).json()) as { agents: Array<{ name: string }> }).agents.map(
      (a) => a.name,
    );
  assert.deepEqual(await names(keys.acme), ['acme_only', 'default', 'open']);
  assert.deepEqual(await names(keys.globexApp), ['default', 'open']);
  assert.deepEqual(await names(keys.globexWeb), ['default', 'globex_web', 'open']);
});

test('a turn naming an agent the caller may not see is the unknown-agent 400, word for word, and claims nothing', async () => {
  const refuse = async (agent: string) => {
    const id = uniqueId('vis');
    const res = await call(keys.globexApp, 'POST', `/v1/conversations/${id}/turns`, {
      prompt: 'hi',
      agent,
      options: scripted('x'),
    });
    assert.equal(res.status, 400);
    const space = conversationSpace({ tenantId: 'globex', projectId: 'app', userId: null });
    assert.equal(await conversationOwner(stack.db.pool, space + id), undefined, 'the refused turn claimed nothing');
    return ((await res.json()) as { error: { message: string } }).error.message;
  };
  const hidden = await refuse('acme_only');
  const unknown = await refuse('nobody');
  assert.equal(hidden.replace('"acme_only"', '"nobody"'), unknown);
  assert.match(unknown, /^agent: unknown agent "nobody" \(agents: default, open\)$/);
  // The tenant it is meant for runs it.
  const id = uniqueId('vis');
  const ok = await call(keys.acme, 'POST', `/v1/conversations/${id}/turns`, {
    prompt: 'hi',
    agent: 'acme_only',
    options: scripted('acme answer'),
  });
  assert.equal(ok.status, 202, await ok.clone().text());
  const conv = conversationSpace({ tenantId: 'acme', projectId: 'web', userId: null }) + id;
  assert.equal((await stack.client.result(conv, 1)).answer, 'acme answer');
});

test('the worker resolves the agent for the conversation’s owner: a turn that reaches it anyway fails as an unknown agent', async () => {
  const failure = async (agent: string) => {
    const conv = uniqueId('vis-direct');
    await claimConversation(stack.db.pool, conv, { tenantId: 'globex', projectId: 'app', userId: null });
    await stack.client.startTurn(
      conv,
      'hi',
      scripted('x'),
      undefined,
      undefined,
      { tenantId: 'globex', projectId: 'app' },
      agent,
    );
    const err = await stack.client.result(conv, 1).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err, `the turn under ${agent} failed`);
    // The turn's failure (the cause chain down to loadContext's UnknownAgent).
    const messages: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) messages.push(e.message);
    return messages.join(' <- ');
  };
  const hidden = await failure('globex_web');
  const unknown = await failure('nobody');
  assert.match(unknown, /unknown agent "nobody" \(this worker has: default, open\)/);
  assert.equal(hidden.replace(/"globex_web"/g, '"nobody"'), unknown);
});

test('the MCP server’s start_turn answers an invisible agent as it answers an unknown one', async () => {
  const client = new Client({ name: 'visibility-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://gw/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${keys.globexApp}` } },
      fetch: async (url, init) => gw.fetch(new Request(url, init)),
    }),
  );
  try {
    const start = async (agent: string) => {
      const r = (await client.callTool({ name: 'start_turn', arguments: { prompt: 'hi', agent } }, undefined, {
        timeout: 60_000,
      })) as CallToolResult;
      assert.equal(r.isError, true);
      return r.content
        .map((c) => (c.type === 'text' ? c.text : ''))
        .join('')
        .replace(/mcp-[0-9a-f-]{36}/g, '<conv>');
    };
    const hidden = await start('acme_only');
    const unknown = await start('nobody');
    // The same answer as for an unknown name (the caller's own word echoed back, the visible agents
    // listed): nothing tells them apart, and nothing was created (checked before any write).
    assert.match(hidden, /unknown agent "acme_only" \(agents: default, open\)/);
    assert.equal(hidden.replace(/"acme_only"/g, '"nobody"'), unknown);
  } finally {
    await client.close();
  }
});
