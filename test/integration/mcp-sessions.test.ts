/**
 * MCP sessions on the gateway's `/mcp` (apps/gateway/mcp-sessions.ts, mcp-routes.ts) on real
 * Temporal and Postgres, a listening gateway and the official SDK's `Client` over Streamable HTTP:
 * `initialize` opens a session bound to its key (another key, an ended or expired id → 404; no
 * session id: stateless as before, GET/DELETE 405); the caps per key and the idle expiry; the
 * gateway's close ends them. Resource subscriptions: a subscribed timeline gets
 * `notifications/resources/updated` when its conversation's stream moves (nothing for another
 * conversation, nothing after unsubscribe; another tenant's conversation refused by uri; a stateless
 * request has no subscribe). Cancellation: a cancelled `start_turn` cancels its turn (it ends
 * `cancelled`), a cancelled `wait_turn` only stops waiting, and the session's own end cancels no turn.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callTool, complete, createTestStack, waitFor, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents } from '../support/agent-scripts';
import { sendTool } from '../support/approval-tool';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { listTurns } from '../../store/turn-store';
import { readEvents } from '../../store/stream-bus';
import { createApiKey, revokeApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let gw: RunningGateway;
let keyA: string;
let keyA2: string;
let keyB: string;
const sends: Array<Record<string, unknown>> = [];

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-mcpsess-'));
  // `gated`: its turn waits for a person's approval of test.send — held until cancelled.
  writeFileSync(path.join(dir, 'gated.yaml'), agentFile('gated'));
  stack = await createTestStack('mcpsess');
  await stack.startWorker({
    agents: { dir },
    extraTools: [sendTool(sends)],
    provider: scriptedAgents({
      gated: { rounds: [callTool('test.send', { to: 'ann@example.com' }), complete('sent')] },
    }),
  });
  keyA = await stack.apiKey(['read', 'write']);
  keyA2 = await stack.apiKey(['read', 'write']);
  keyB = await stack.apiKey(['read', 'write'], { tenantId: 'globex', projectId: 'app' });
  gw = await stack.startGateway({ mcp: { updateCoalesceMs: 100 }, streamRecheckMs: 200 });
});
after(async () => {
  await stack.teardown();
});

async function connect(key: string, url = `${gw.url}/mcp`) {
  const client = new Client({ name: 'mcp-sessions-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const raw = (key: string, method: string, opts: { session?: string; body?: unknown; url?: string } = {}) =>
  fetch(opts.url ?? `${gw.url}/mcp`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(opts.session ? { 'mcp-session-id': opts.session } : {}),
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
const toolsList = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

test("a session: initialize names it; another key with its id → 404; DELETE ends it (then 404); a revoked key's session closes; no session id: stateless, GET/DELETE 405", async () => {
  const { client, transport } = await connect(keyA);
  const id = transport.sessionId;
  assert.match(id ?? '', /^[0-9a-f-]{36}$/, 'a random session id');
  assert.ok((await client.listTools()).tools.some((t) => t.name === 'start_turn'));
  // The session's own key reaches it; another key — same tenant or another — never does.
  const own = await raw(keyA, 'POST', { session: id, body: toolsList });
  assert.equal(own.status, 200, await own.clone().text());
  assert.match(await own.text(), /start_turn/);
  for (const key of [keyA2, keyB]) {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await raw(key, method, { session: id, ...(method === 'POST' ? { body: toolsList } : {}) });
      assert.equal(res.status, 404, `${method} with another key`);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32001);
    }
  }
  assert.equal((await raw(keyA, 'POST', { session: 'no-such-session', body: toolsList })).status, 404);
  // Without a session id: served statelessly, as before; GET and DELETE answer 405.
  const stateless = await raw(keyA, 'POST', { body: toolsList });
  assert.equal(stateless.status, 200);
  assert.match(await stateless.text(), /start_turn/);
  for (const method of ['GET', 'DELETE']) {
    const res = await raw(keyA, method);
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /without an Mcp-Session-Id/);
  }
  const before = gw.gateway.mcpSessions.size;
  await transport.terminateSession();
  assert.equal(gw.gateway.mcpSessions.size, before - 1);
  assert.equal((await raw(keyA, 'POST', { session: id, body: toolsList })).status, 404);
  assert.equal((await raw(keyA, 'GET', { session: id })).status, 404);
  await client.close();

  // A key revoked meanwhile: its sessions close (their streams end) at the next recheck.
  const doomed = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
    scopes: ['read'],
  });
  const session = await connect(doomed.key);
  const doomedId = session.transport.sessionId!;
  assert.ok(gw.gateway.mcpSessions.openRequests(doomedId) !== undefined);
  await revokeApiKey(stack.db.pool, doomed.id);
  await waitFor(
    "the revoked key's session to close",
    async () => gw.gateway.mcpSessions.openRequests(doomedId) === undefined,
  );
  await session.client.close();
});

test('caps and expiry: a key at its cap makes room from an idle session (none idle: 429); an idle session expires (404); the gateway closes its sessions', async () => {
  // A gateway of its own (closed here, not by the stack's teardown).
  const small = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    port: 0,
    log: () => undefined,
    mcp: { sessionLimits: { maxPerKey: 2, maxTotal: 3, idleMs: 600 } },
  });
  let closed = false;
  try {
    const url = `${small.url}/mcp`;
    // SDK clients hold their session's GET stream open: busy, never evicted nor expired.
    const one = await connect(keyA, url);
    const two = await connect(keyA, url);
    await waitFor('both GET streams', async () =>
      [one, two].every((c) => (small.gateway.mcpSessions.openRequests(c.transport.sessionId!) ?? 0) > 0),
    );
    const refused = await raw(keyA, 'POST', { url, body: initialize });
    assert.equal(refused.status, 429);
    assert.match(await refused.text(), /holds 2 MCP sessions, the most it may/);
    // Another key has its own cap.
    const other = await raw(keyB, 'POST', { url, body: initialize });
    assert.equal(other.status, 200);
    const otherId = other.headers.get('mcp-session-id');
    await other.text();
    // The process's cap (3 here): room for no fourth session, whoever asks.
    const full = await raw(keyB, 'POST', { url, body: initialize });
    assert.equal(full.status, 503);
    assert.match(await full.text(), /as many MCP sessions as it may/);
    // One client goes away (its stream ends): its session is idle, the next initialize replaces it.
    const gone = one.transport.sessionId;
    await one.client.close();
    await waitFor('the stream to end', async () => {
      const r = await raw(keyA, 'POST', { url, body: initialize });
      await r.text();
      return r.status === 200;
    });
    assert.equal((await raw(keyA, 'POST', { url, session: gone, body: toolsList })).status, 404);
    // A session with no open request or stream expires.
    // (A request would keep it alive: the probe waits out the idle time first.)
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await raw(keyB, 'POST', { url, session: otherId!, body: toolsList })).status, 404, 'expired');
    assert.ok((await two.client.listTools()).tools.length > 0, 'a busy one stays');
    assert.ok(small.gateway.mcpSessions.size >= 1);
    await small.close();
    closed = true;
    assert.equal(small.gateway.mcpSessions.size, 0, 'closed with the gateway');
    await two.client.close();
  } finally {
    if (!closed) await small.close();
  }
});

test('subscribe: the timeline of a conversation gets resources/updated when a turn runs; none for another; none after unsubscribe; another tenant refused', async () => {
  const { client } = await connect(keyA);
  assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  const turn = async (conv: string, prompt: string) => {
    const r = (await client.callTool({ name: 'start_turn', arguments: { prompt, conversation_id: conv } }, undefined, {
      timeout: 60_000,
    })) as CallToolResult;
    assert.notEqual(r.isError, true, textOf(r));
  };
  await turn('sub-1', 'first');
  await turn('sub-2', 'other');
  const uri = 'dreact://conversations/sub-1/timeline';
  assert.deepEqual(await client.subscribeResource({ uri }), {});
  const t0 = Date.now();
  await turn('sub-1', 'second');
  const took = Date.now() - t0;
  await waitFor('an update', async () => updates.includes(uri));
  await turn('sub-2', 'again');
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual([...new Set(updates)], [uri], 'only the subscribed uri');
  // Coalesced: at most one per 100 ms window (the gateway's updateCoalesceMs), far fewer than events.
  assert.ok(updates.length <= took / 100 + 2, `${updates.length} updates in ${took} ms`);
  const events = (await readEvents(stack.db.pool, 'acme~web~sub-1', 0)).filter((e) => e.turnId === 'turn_2');
  assert.ok(updates.length < events.length / 2, `${updates.length} updates for ${events.length} events`);
  const read = await client.readResource({ uri });
  assert.match((read.contents[0] as { text: string }).text, /second/);

  assert.deepEqual(await client.unsubscribeResource({ uri }), {});
  await new Promise((r) => setTimeout(r, 300));
  const seen = updates.length;
  await turn('sub-1', 'third');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(updates.length, seen, 'nothing after unsubscribe');

  // Another tenant: refused by uri, nothing subscribed; a uri that is no dreact:// resource likewise.
  const { client: other } = await connect(keyB);
  await assert.rejects(
    other.subscribeResource({ uri }),
    /cannot subscribe to "dreact:\/\/conversations\/sub-1\/timeline": no conversation "sub-1"/,
  );
  await assert.rejects(
    other.subscribeResource({ uri: 'test://watched-resource' }),
    /cannot subscribe to "test:\/\/watched-resource": not a dreact:\/\/ conversation resource/,
  );
  // A session holds 100 uris at most; the next is refused by uri.
  for (let i = 0; i < 100; i++)
    await client.subscribeResource({ uri: `dreact://conversations/sub-2/files/notes/${i}.md` });
  await assert.rejects(
    client.subscribeResource({ uri: 'dreact://conversations/sub-2/files/notes/100.md' }),
    /cannot subscribe to "dreact:\/\/conversations\/sub-2\/files\/notes\/100\.md": this session holds 100 subscriptions/,
  );
  // Stateless (no session): nothing could carry an update, so there is no subscribe.
  const stateless = await raw(keyA, 'POST', {
    body: { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri } },
  });
  assert.match(await stateless.text(), /"code":-32601/);
  await other.close();
  await client.close();
});

test('cancel: an aborted start_turn cancels its turn (it ends cancelled); an aborted wait_turn leaves the turn running', async () => {
  const { client } = await connect(keyA);
  // Each held turn is cancelled and seen to end before the test does (a request still waiting on
  // it would outlive the stack otherwise).
  const ended = (conv: string) =>
    waitFor(`${conv} to end`, async () =>
      (await listTurns(stack.db.pool, `acme~web~${conv}`)).find((t) => t.finishedAt !== null),
    );
  const pending = async (conv: string) =>
    waitFor('the approval wait', async () => {
      const r = await fetch(`${gw.url}/v1/conversations/${conv}/approvals`, { headers: { 'x-api-key': keyA } });
      return r.status === 200 && ((await r.json()) as { approvals: unknown[] }).approvals.length > 0;
    });
  const abort = new AbortController();
  const call = client.callTool(
    { name: 'start_turn', arguments: { prompt: 'send it', conversation_id: 'cancel-1', agent: 'gated' } },
    undefined,
    { signal: abort.signal, timeout: 60_000 },
  );
  await pending('cancel-1');
  abort.abort('the user pressed stop');
  await assert.rejects(call, /abort|stop/i);
  assert.equal((await ended('cancel-1')).completionPath, 'cancelled');
  assert.deepEqual(sends, [], 'the held tool never ran');

  // wait_turn cancelled: only the wait stops.
  const started = (await client.callTool({
    name: 'start_turn',
    arguments: { prompt: 'send it', conversation_id: 'cancel-2', agent: 'gated', wait: false },
  })) as CallToolResult;
  assert.notEqual(started.isError, true, textOf(started));
  await pending('cancel-2');
  const stop = new AbortController();
  const waiting = client.callTool(
    { name: 'wait_turn', arguments: { conversation_id: 'cancel-2', turn_index: 1 } },
    undefined,
    { signal: stop.signal, timeout: 60_000 },
  );
  await new Promise((r) => setTimeout(r, 300));
  stop.abort();
  await assert.rejects(waiting, /abort/i);
  await new Promise((r) => setTimeout(r, 1000));
  const state = await stack.client.conversationState('acme~web~cancel-2');
  assert.equal(state.activeTurn?.turnIndex, 1, 'the turn runs on');
  assert.deepEqual(
    (await listTurns(stack.db.pool, 'acme~web~cancel-2')).map((t) => t.finishedAt),
    [null],
  );
  await stack.client.cancel('acme~web~cancel-2', { turnIndex: 1 });
  assert.equal((await ended('cancel-2')).completionPath, 'cancelled');
  await client.close();

  // The session's own end (DELETE, expiry, shutdown) ends its requests, never their turns.
  const { client: third, transport } = await connect(keyA);
  const held = third.callTool(
    { name: 'start_turn', arguments: { prompt: 'send it', conversation_id: 'cancel-3', agent: 'gated' } },
    undefined,
    { timeout: 60_000 },
  );
  held.catch(() => undefined);
  await pending('cancel-3');
  await transport.terminateSession();
  await third.close();
  await assert.rejects(held);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await stack.client.conversationState('acme~web~cancel-3')).activeTurn?.turnIndex, 1, 'runs on');
  await stack.client.cancel('acme~web~cancel-3', { turnIndex: 1 });
  assert.equal((await ended('cancel-3')).completionPath, 'cancelled');

  // Stateless: the cancellation arrives on another request, to another server — nothing to correlate.
  const hold = new AbortController();
  const call4 = {
    jsonrpc: '2.0',
    id: 41,
    method: 'tools/call',
    params: { name: 'start_turn', arguments: { prompt: 'send it', conversation_id: 'cancel-4', agent: 'gated' } },
  };
  const waitingRaw = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    signal: hold.signal,
    headers: {
      authorization: `Bearer ${keyA}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify(call4),
  });
  assert.equal(waitingRaw.status, 200);
  await pending('cancel-4');
  const cancelled = await raw(keyA, 'POST', {
    body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41, reason: 'stop' } },
  });
  assert.equal(cancelled.status, 202);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await stack.client.conversationState('acme~web~cancel-4')).activeTurn?.turnIndex, 1, 'runs on');
  assert.equal(gw.gateway.mcpSessions.statelessInFlight, 1, 'the stateless start_turn still waits');
  // Its client goes away: the request's server closes (the wait stops; the turn runs on).
  hold.abort();
  await waitFor('the stateless wait to stop', async () => gw.gateway.mcpSessions.statelessInFlight === 0);
  assert.equal((await stack.client.conversationState('acme~web~cancel-4')).activeTurn?.turnIndex, 1, 'runs on');
  await stack.client.cancel('acme~web~cancel-4', { turnIndex: 1 });
  assert.equal((await ended('cancel-4')).completionPath, 'cancelled');
});
