/**
 * durable-react as an MCP server (apps/gateway/mcp-routes.ts, apps/mcp-server/server.ts) on real
 * Temporal and Postgres, driven by the official SDK's own client over Streamable HTTP: it lists
 * the tools, starts a turn and receives progress notifications and the answer, reads the
 * conversation back; another tenant's key sees none of it; a missing key is refused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestStack, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let gw: GatewayApp;
let keyA: string;
let keyB: string;

before(async () => {
  stack = await createTestStack('mcpserver');
  await stack.startWorker();
  keyA = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
  keyB = (
    await createApiKey(stack.db.pool, { tenantId: 'globex', projectId: 'app', userId: null, scopes: ['read', 'write'] })
  ).key;
  gw = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [], listen: false, pollMs: 50 });
});
after(async () => {
  await gw.close();
  await stack.teardown();
});

/** An SDK client whose HTTP requests go to the gateway app. */
async function connect(key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://gw/mcp'), {
    ...(key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
    fetch: async (url, init) => gw.fetch(new Request(url, init)),
  });
  await client.connect(transport);
  return client;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

test('the SDK client lists the tools, starts a turn, receives progress and the answer, and reads it back', async () => {
  const client = await connect(keyA);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(tools, [
    'list_conversations',
    'read',
    'read_timeline',
    'search_memory',
    'start_turn',
    'steer',
    'wait_turn',
  ]);
  const progress: string[] = [];
  const result = (await client.callTool(
    { name: 'start_turn', arguments: { prompt: 'write a plan note', conversation_id: 'mcp-conv-1' } },
    undefined,
    { onprogress: (p) => progress.push(p.message ?? ''), timeout: 60_000 },
  )) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  const structured = result.structuredContent as { conversation_id: string; turn_index: number; answer: string };
  assert.equal(structured.conversation_id, 'mcp-conv-1');
  assert.equal(structured.turn_index, 1);
  assert.ok(structured.answer.length > 0);
  assert.equal(textOf(result), structured.answer);
  assert.ok(progress.length > 0, 'progress notifications');
  assert.ok(
    progress.some((m) => /^step phase=/.test(m)),
    progress.join(' | '),
  );

  const list = (await client.callTool({ name: 'list_conversations', arguments: {} })) as CallToolResult;
  const ids = (list.structuredContent as { conversations: Array<{ id: string }> }).conversations.map((c) => c.id);
  assert.deepEqual(ids, ['mcp-conv-1']);
  const timeline = (await client.callTool({
    name: 'read_timeline',
    arguments: { conversation_id: 'mcp-conv-1' },
  })) as CallToolResult;
  const types = (timeline.structuredContent as { blocks: Array<{ type: string }> }).blocks.map((b) => b.type);
  assert.ok(types.includes('user.prompt') && types.includes('assistant.completion'), types.join(','));
  const read = (await client.callTool({
    name: 'read',
    arguments: { conversation_id: 'mcp-conv-1', paths: ['ar:turn_1.user.prompt'] },
  })) as CallToolResult;
  assert.match(textOf(read), /write a plan note/);
  const search = (await client.callTool({
    name: 'search_memory',
    arguments: { conversation_id: 'mcp-conv-1', query: 'plan note' },
  })) as CallToolResult;
  assert.notEqual(search.isError, true, textOf(search));
  const steer = (await client.callTool({
    name: 'steer',
    arguments: { conversation_id: 'mcp-conv-1', text: 'stop' },
  })) as CallToolResult;
  assert.equal(steer.isError, true, 'no running turn to steer');
  assert.match(textOf(steer), /no running turn/);
  await client.close();
});

test("a foreign key sees nothing of another tenant's conversations; a missing key is refused", async () => {
  const client = await connect(keyB);
  const list = (await client.callTool({ name: 'list_conversations', arguments: {} })) as CallToolResult;
  assert.deepEqual((list.structuredContent as { conversations: unknown[] }).conversations, []);
  for (const [name, args] of [
    ['read_timeline', { conversation_id: 'mcp-conv-1' }],
    ['read', { conversation_id: 'mcp-conv-1', paths: ['ar:turn_1.user.prompt'] }],
    ['search_memory', { conversation_id: 'mcp-conv-1', query: 'plan' }],
    ['wait_turn', { conversation_id: 'mcp-conv-1', turn_index: 1 }],
    ['steer', { conversation_id: 'mcp-conv-1', text: 'hijack' }],
  ] as const) {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.equal(r.isError, true, name);
    assert.match(textOf(r), /no conversation "mcp-conv-1"/, name);
  }
  // The same id is B's own, new conversation: starting a turn there touches nothing of A's.
  const started = (await client.callTool({
    name: 'start_turn',
    arguments: { prompt: 'mine', conversation_id: 'mcp-conv-1', wait: false },
  })) as CallToolResult;
  assert.notEqual(started.isError, true, textOf(started));
  await client.close();
  const a = await connect(keyA);
  const own = (await a.callTool({
    name: 'read_timeline',
    arguments: { conversation_id: 'mcp-conv-1' },
  })) as CallToolResult;
  assert.doesNotMatch(textOf(own), /"mine"|\bmine\b/);
  await a.close();

  const res = await gw.fetch(
    new Request('http://gw/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  );
  assert.equal(res.status, 401);
  await assert.rejects(connect('dr_bogus_key'), /401|invalid/i);
});
