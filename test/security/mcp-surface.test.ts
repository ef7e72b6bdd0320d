/**
 * Security (issue 36, holes 8 and 9; issue 43's MCP defects): the MCP surface as strict as the API.
 *
 * - `start_turn` checks everything before it writes: an unknown or ill-formed agent name leaves no
 *   conversation behind (before: the row stayed, or a turn started that failed);
 * - errors are the project's own words with the conversation id: never a driver's text
 *   (Postgres' `invalid byte sequence for encoding "UTF8": 0x00`), never the stored
 *   `t1~p1~…` id, and a failed turn says why (before: "Workflow execution failed", no id);
 * - DNS rebinding: a request with a foreign `Origin` is refused even with a valid key, and a
 *   browser client from an allowed origin may send `authorization` and `mcp-protocol-version`.
 *
 * The official SDK client over Streamable HTTP, real Temporal and Postgres; the worker has no
 * default model, so every turn fails with our own "no model configured" message.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestStack, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';
import { listConversations } from '../../store/conversation-list-store';

const ALLOWED = 'https://chat.example.com';
const ACME = { tenantId: 'acme', projectId: 'web', userId: null };
let stack: TestStack;
let gw: GatewayApp;
let key: string;

before(async () => {
  stack = await createTestStack('sec_mcp');
  await stack.startWorker({ defaultModel: undefined });
  key = (await createApiKey(stack.db.pool, { ...ACME, scopes: ['read', 'write'] })).key;
  gw = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
    corsOrigins: [ALLOWED],
    hostnames: ['gw'],
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-surface-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://gw/mcp'), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
    fetch: async (url, init) => gw.fetch(new Request(url, init)),
  });
  await client.connect(transport);
  return client;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult;
const conversations = async () => (await listConversations(stack.db.pool, ACME, { limit: 100 })).map((c) => c.id);

test('attack: start_turn with an unknown or ill-formed agent leaves a conversation (or a failing turn) behind → refused, nothing written', async () => {
  const client = await connect();
  const before = await conversations();
  for (const [agent, why] of [
    ['nobody', /unknown agent "nobody"/],
    ['Not An Agent!', /agent/],
  ] as const) {
    for (const args of [{}, { conversation_id: `fresh-${agent.length}` }]) {
      const r = await call(client, 'start_turn', { prompt: 'hello', agent, wait: false, ...args });
      assert.equal(r.isError, true, textOf(r));
      assert.match(textOf(r), why);
      assert.match(textOf(r), /nothing was created/);
    }
  }
  assert.deepEqual(await conversations(), before, 'no conversation row was claimed');
  await client.close();
});

test('attack: MCP tool errors carry Postgres text (0x00) and the stored t1~p1~ ids → our words, the caller’s ids', async () => {
  const client = await connect();
  // A NUL in any text argument: refused by name before any query (Postgres would refuse it with its own text).
  for (const [name, args] of [
    ['read', { conversation_id: 'x', paths: ['fi:a\u0000b'] }],
    ['search_memory', { conversation_id: 'x', query: 'a\u0000b' }],
    ['read_timeline', { conversation_id: 'x\u0000' }],
    ['start_turn', { prompt: 'nul \u0000 here', wait: false }],
    ['steer', { conversation_id: 'x', text: 'a\u0000' }],
    ['list_approvals', { conversation_id: 'x\u0000' }],
    ['decide_tool_call', { conversation_id: 'x', call_id: 'tc_000000000000', decision: 'deny', reason: 'a\u0000' }],
  ] as const) {
    const r = await call(client, name, args);
    assert.equal(r.isError, true, name);
    assert.doesNotMatch(textOf(r), /invalid byte sequence|UTF8|SQLSTATE/, name);
    assert.match(textOf(r), /NUL character/, name);
  }
  // Our own errors name the conversation as the caller does (no tenant~project~ prefix anywhere).
  const started = await call(client, 'start_turn', { prompt: 'first', conversation_id: 'own-1', wait: false });
  assert.notEqual(started.isError, true, textOf(started));
  const steer = await call(client, 'steer', { conversation_id: 'own-1', text: 'stop' });
  const text = JSON.stringify(steer);
  assert.doesNotMatch(text, /acme~web~/, text);
  await client.close();
});

test('attack: a failed turn answers only "Workflow execution failed", without the conversation id → the reason and the id', async () => {
  const client = await connect();
  const r = await call(client, 'start_turn', { prompt: 'answer me', conversation_id: 'fails-1' });
  assert.equal(r.isError, true, textOf(r));
  assert.match(textOf(r), /^conversation fails-1: turn 1 failed: .*no model configured/, textOf(r));
  assert.doesNotMatch(textOf(r), /Workflow execution failed|acme~web~/);
  assert.deepEqual(r.structuredContent, {
    conversation_id: 'fails-1',
    error: { code: 'failed', message: (r.structuredContent as { error: { message: string } }).error.message },
  });
  await client.close();
});

test('attack: DNS rebinding — a valid key with Host/Origin http://evil.example.com gets 200 → 403', async () => {
  const post = (origin: string | undefined, host = 'gw') =>
    gw.fetch(
      new Request('http://gw/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          host,
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
    );
  const evil = await post('http://evil.example.com');
  assert.equal(evil.status, 403);
  // A rebound name in Host is refused even from an allowed origin (and without any).
  assert.equal((await post(ALLOWED, 'evil.example.com')).status, 403);
  assert.equal((await post(undefined, 'evil.example.com')).status, 403);
  assert.match(
    ((await evil.json()) as { error: { message: string } }).error.message,
    /Origin "http:\/\/evil\.example\.com" is not allowed/,
  );
  const allowed = await post(ALLOWED);
  assert.equal(allowed.status, 200, await allowed.text());
  assert.equal(allowed.headers.get('access-control-allow-origin'), ALLOWED);
  // No Origin: not a browser (a desktop MCP client) — allowed.
  assert.equal((await post(undefined)).status, 200);
});

test('attack: CORS on /mcp omits authorization and mcp-protocol-version → a browser client from an allowed origin may send them', async () => {
  const preflight = await gw.fetch(
    new Request('http://gw/mcp', {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    }),
  );
  assert.ok(preflight.status === 204 || preflight.status === 200, String(preflight.status));
  assert.equal(preflight.headers.get('access-control-allow-origin'), ALLOWED);
  const allowedHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase();
  for (const h of ['authorization', 'mcp-protocol-version', 'content-type'])
    assert.ok(allowedHeaders.includes(h), allowedHeaders);
  // And the SDK client itself, sending the allowed Origin, works end to end.
  const client = await connect({ origin: ALLOWED });
  assert.ok((await client.listTools()).tools.length > 0);
  await client.close();
});
