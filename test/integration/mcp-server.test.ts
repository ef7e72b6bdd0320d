/**
 * durable-react as an MCP server (apps/gateway/mcp-routes.ts, apps/mcp-server/server.ts) on real
 * Temporal and Postgres, driven by the official SDK's own client over Streamable HTTP: it lists
 * the tools, starts a turn and receives progress notifications and the answer, reads the
 * conversation back; another tenant's key sees none of it; a missing key is refused. Issue 43's
 * defects: DNS rebinding refused (a foreign Host or Origin, also on a listening gateway), CORS for
 * a browser client, GET/DELETE 405 without a session id (sessions: mcp-sessions.test.ts), no
 * `tools.listChanged` promise, an unknown agent answered with the agents and nothing left in
 * Postgres, no stored `~` id in steer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { request as httpRequest } from 'node:http';
import { complete, createTestStack, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { gatewayConfigFromEnv, startGateway } from '../../apps/gateway/server';
import { readEvents } from '../../store/stream-bus';
import { createApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let gw: GatewayApp;
let keyA: string;
let keyB: string;
const ALLOWED = 'https://chat.example.com';

before(async () => {
  stack = await createTestStack('mcpserver');
  await stack.startWorker();
  keyA = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
  keyB = (
    await createApiKey(stack.db.pool, { tenantId: 'globex', projectId: 'app', userId: null, scopes: ['read', 'write'] })
  ).key;
  gw = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
    corsOrigins: [ALLOWED],
    hostnames: ['gw'],
    allowScripted: true,
  });
});
after(async () => {
  await gw.close();
  await stack.teardown();
});

/** An SDK client whose HTTP requests go to the gateway app. */
async function connect(key: string | undefined, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://gw/mcp'), {
    requestInit: { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } },
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

/** A raw request to the gateway's /mcp (for the headers the SDK client does not let a test choose). */
const raw = (method: string, headers: Record<string, string>, body?: unknown) =>
  gw.fetch(
    new Request('http://gw/mcp', {
      method,
      headers: { accept: 'application/json, text/event-stream', ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
const toolsList = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
type RpcError = { jsonrpc: string; id: null; error: { code: number; message: string } };

test('DNS rebinding: a valid key with a foreign Host or Origin → 403 JSON-RPC error; the allowed origin and loopback pass', async () => {
  const post = (headers: Record<string, string>) =>
    raw('POST', { authorization: `Bearer ${keyA}`, 'content-type': 'application/json', ...headers }, toolsList);
  const evilHost = await post({ host: 'evil.example.com' });
  assert.equal(evilHost.status, 403);
  const hostBody = (await evilHost.json()) as RpcError;
  assert.equal(hostBody.jsonrpc, '2.0');
  assert.equal(hostBody.error.code, -32000);
  assert.match(hostBody.error.message, /Host "evil\.example\.com" is not one of this gateway's host names/);
  // Port-agnostic, and the Host wins over an allowed Origin.
  assert.equal((await post({ host: 'evil.example.com:8787', origin: ALLOWED })).status, 403);
  const evilOrigin = await post({ origin: 'http://evil.example.com' });
  assert.equal(evilOrigin.status, 403);
  assert.match(
    ((await evilOrigin.json()) as RpcError).error.message,
    /Origin "http:\/\/evil\.example\.com" is not allowed .*DNS rebinding/,
  );
  for (const host of ['gw', 'localhost:8787', '127.0.0.1', '[::1]:9']) {
    const ok = await post({ host });
    assert.equal(ok.status, 200, `${host}: ${await ok.clone().text()}`);
  }
  const allowed = await post({ origin: ALLOWED });
  assert.equal(allowed.status, 200, await allowed.text());
  assert.equal(allowed.headers.get('access-control-allow-origin'), ALLOWED);
  // The SDK client from the allowed origin works; from a foreign one it is refused.
  const client = await connect(keyA, { origin: ALLOWED });
  assert.ok((await client.listTools()).tools.length > 0);
  await client.close();
  await assert.rejects(connect(keyA, { origin: 'http://evil.example.com' }), /403|not allowed/);
});

test('DNS rebinding on a listening gateway: its own address and DREACT_GATEWAY_HOSTNAMES pass, a rebound Host is refused', async () => {
  const running = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    port: 0,
    host: '127.0.0.1',
    hostnames: gatewayConfigFromEnv({ DREACT_GATEWAY_HOSTNAMES: 'mcp.example.com, other.example.com,' }).hostnames,
    log: () => undefined,
  });
  try {
    const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${keyA}` } },
      }),
    );
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
    // fetch does not let a caller choose Host; node:http does (what a rebound page's request carries).
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify(toolsList);
        const req = httpRequest(
          `${running.url}/mcp`,
          {
            method: 'POST',
            headers: {
              host,
              authorization: `Bearer ${keyA}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await statusFor(`evil.example.com:${running.port}`), 403);
    // A name from DREACT_GATEWAY_HOSTNAMES (what a proxy in front forwards) passes; others do not.
    assert.equal(await statusFor('mcp.example.com'), 200);
    assert.equal(await statusFor(`Other.Example.com:${running.port}`), 200);
    assert.equal(await statusFor('mcp.example.com.evil.example.com'), 403);
  } finally {
    await running.close();
  }
});

test('CORS: a browser MCP client from an allowed origin may send its headers and read mcp-session-id', async () => {
  const preflight = await raw('OPTIONS', {
    origin: ALLOWED,
    'access-control-request-method': 'POST',
    'access-control-request-headers':
      'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), ALLOWED);
  const allowedHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
  for (const h of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'])
    assert.ok(allowedHeaders.includes(h), `${h} in ${allowedHeaders.join(',')}`);
  const res = await raw(
    'POST',
    { origin: ALLOWED, authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
    toolsList,
  );
  assert.equal(res.status, 200);
  assert.ok(
    (res.headers.get('access-control-expose-headers') ?? '')
      .toLowerCase()
      .split(/\s*,\s*/)
      .includes('mcp-session-id'),
  );
  // A foreign origin's preflight gets no CORS grant.
  const foreign = await raw('OPTIONS', { origin: 'http://evil.example.com', 'access-control-request-method': 'POST' });
  assert.equal(foreign.headers.get('access-control-allow-origin'), null);
});

test('without a session id: GET and DELETE answer 405 (no idle SSE stream), and tools.listChanged is not promised', async () => {
  for (const method of ['GET', 'DELETE']) {
    const res = await raw(method, { authorization: `Bearer ${keyA}`, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get('allow'), 'POST');
    const body = (await res.json()) as RpcError;
    assert.match(body.error.message, /Method Not Allowed: without an Mcp-Session-Id .*stateless/, method);
  }
  const client = await connect(keyA);
  const caps = client.getServerCapabilities();
  assert.ok(caps?.tools, JSON.stringify(caps));
  assert.notEqual(caps.tools.listChanged, true, JSON.stringify(caps));
  await client.close();
});

test('start_turn with an unknown agent: the reason lists the agents, names the conversation, and leaves nothing in Postgres', async () => {
  const client = await connect(keyA);
  const r = (await client.callTool({
    name: 'start_turn',
    arguments: { prompt: 'hello', agent: 'nobody', conversation_id: 'mcp-agentless', wait: false },
  })) as CallToolResult;
  assert.equal(r.isError, true, textOf(r));
  assert.match(
    textOf(r),
    /^conversation mcp-agentless: agent: unknown agent "nobody" \(agents: [^)]*\bdefault\b[^)]*\) \(nothing was created\)$/,
  );
  assert.equal((r.structuredContent as { conversation_id?: string }).conversation_id, 'mcp-agentless');
  // Without an id of the caller's: the reason, and no generated id that names nothing.
  const anon = (await client.callTool({
    name: 'start_turn',
    arguments: { prompt: 'hello', agent: 'nobody', wait: false },
  })) as CallToolResult;
  assert.equal(anon.isError, true);
  assert.match(textOf(anon), /^agent: unknown agent "nobody" \(agents: /);
  assert.doesNotMatch(JSON.stringify(anon), /mcp-[0-9a-f]{8}-/);
  const rows = await stack.db.pool.query(
    `SELECT id FROM conversations WHERE id LIKE '%mcp-agentless' OR (id LIKE 'acme~web~mcp-%' AND id <> 'acme~web~mcp-conv-1')`,
  );
  assert.deepEqual(rows.rows, [], 'no conversation row was written');
  await client.close();
});

test("steer: its answer and its error name the conversation and the turn as the caller does (no stored '~' id)", async () => {
  const conv = 'mcp-steer-1';
  const started = await gw.fetch(
    new Request(`http://gw/v1/conversations/${conv}/turns`, {
      method: 'POST',
      headers: { 'x-api-key': keyA, 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'go',
        options: {
          model: {
            provider: 'scripted',
            script: {
              rounds: [complete('z'.repeat(2000))],
              chunkSize: 4,
              latencyMs: 50,
              finalize: complete('Stopped: {{event}}'),
            },
          },
        },
      }),
    }),
  );
  assert.equal(started.status, 202, await started.clone().text());
  await waitFor('round 1 to stream', async () =>
    (await readEvents(stack.db.pool, `acme~web~${conv}`, 0)).some((e) => e.kind === 'delta'),
  );
  const client = await connect(keyA);
  const steer = (await client.callTool({
    name: 'steer',
    arguments: { conversation_id: conv, text: 'stop' },
  })) as CallToolResult;
  assert.notEqual(steer.isError, true, textOf(steer));
  assert.equal(textOf(steer), `steered ${conv} (turn 1)`);
  assert.deepEqual(steer.structuredContent, { conversation_id: conv, turn_index: 1 });
  assert.doesNotMatch(JSON.stringify(steer), /~|conv\//);
  const answer = (await client.callTool(
    { name: 'wait_turn', arguments: { conversation_id: conv, turn_index: 1 } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult;
  assert.equal(textOf(answer), 'Stopped: stop');
  await waitFor(
    'the turn to be released',
    async () => (await stack.client.conversationState(`acme~web~${conv}`)).activeTurn === null,
  );
  const idle = (await client.callTool({
    name: 'steer',
    arguments: { conversation_id: conv, text: 'again' },
  })) as CallToolResult;
  assert.equal(idle.isError, true);
  assert.equal(textOf(idle), `conversation "${conv}" has no running turn to steer`);
  assert.doesNotMatch(JSON.stringify(idle), /~/);
  await client.close();
});
