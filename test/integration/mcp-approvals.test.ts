/**
 * Human approval over MCP (apps/mcp-server/approvals.ts) on real Temporal and Postgres, through a
 * listening gateway, driven by the official SDK's `Client` over Streamable HTTP sessions: a turn
 * started with `start_turn` reaches an approval; its progress and log messages say "call <id>
 * (<tool>) waits for approval: answer with decide_tool_call"; `list_approvals` shows the call;
 * `decide_tool_call` from a second connection approves (the waiting call returns the answer with
 * the tool's result) or denies (the answer tells the denial). With the `elicitation` capability
 * the waiting request carries a form for the call: accept is the decision, decline decides nothing.
 * Refusals: a read-only key (names the scope), another tenant ("no conversation"), an unknown call
 * and a decided one (named) — never a stored `~` id.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { sendTool } from '../support/approval-tool';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import type { ModelProvider } from '../../core/model/provider';
import type { RunningGateway } from '../../apps/gateway/server';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createDreactMcpServer } from '../../apps/mcp-server/server';

let stack: TestStack;
let gw: RunningGateway;
const keys = { approver: '', reader: '', foreign: '' };
const runs: Array<Record<string, unknown>> = [];
const open: Client[] = [];

/** The scripted model: calls test.send, then answers with what the call's observation said. */
const provider = (): ModelProvider => ({
  id: 'scripted',
  stream(request, options) {
    const seen = JSON.stringify(request.messages);
    const denied = /denied by [^:"\\]+: [^"\\]+/.exec(seen)?.[0];
    const sent = /sent to [a-z@.]+/.exec(seen)?.[0];
    const script = ScriptSpecSchema.parse({
      structured: { conversation_title: { title: 'MCP approval' } },
      rounds: [
        callTool('test.send', { to: 'a@example.com' }, 'the user asked'),
        complete(denied ? `not sent (${denied})` : `done: ${sent ?? 'no result'}`),
      ],
    });
    return createScriptedProvider(script).stream(request, options);
  },
});

before(async () => {
  stack = await createTestStack('mcpapprovals');
  await stack.startWorker({ provider, extraTools: [sendTool(runs, { answer: (p) => `sent to ${String(p.to)}` })] });
  keys.approver = await stack.apiKey(['read', 'write', 'approve']);
  keys.reader = await stack.apiKey(['read']);
  keys.foreign = await stack.apiKey(['read', 'write', 'approve'], { tenantId: 'globex', projectId: 'app' });
  gw = await stack.startGateway();
});
after(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await stack?.teardown();
});

/** An SDK client on a session of the gateway's /mcp; `elicit` declares the capability and answers forms. */
async function connect(
  key: string,
  elicit?: (r: ElicitRequest, extra: { signal: AbortSignal }) => Promise<ElicitResult>,
) {
  const client = new Client(
    { name: 'mcp-approvals-test', version: '1.0.0' },
    elicit ? { capabilities: { elicitation: {} } } : {},
  );
  const logs: string[] = [];
  /** What arrived on the wire (the SDK's client ignores a cancellation of request id 0: `if (!requestId)`). */
  const wire: Array<{ id?: unknown; method?: string; params?: { requestId?: unknown } }> = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  const deliver = transport.onmessage!;
  transport.onmessage = (m) => {
    wire.push(m as (typeof wire)[number]);
    deliver(m);
  };
  open.push(client);
  return { client, logs, wire };
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const tool = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** Starts a waited turn; resolves once its progress names the waiting call. */
async function startWaiting(client: Client, conversationId: string) {
  const progress: string[] = [];
  const answer = client.callTool(
    { name: 'start_turn', arguments: { prompt: 'send it', conversation_id: conversationId } },
    undefined,
    { onprogress: (p) => progress.push(p.message ?? ''), timeout: 60_000 },
  ) as Promise<CallToolResult>;
  const line = await waitFor('the waiting message', async () => progress.find((m) => /waits for approval/.test(m)));
  const callId = /^call (tc_[0-9a-f]{12}) /.exec(line)?.[1];
  assert.ok(callId, line);
  return { answer, line, callId, progress };
}

test('start_turn reaches an approval: the message names the call; decide_tool_call from a second connection approves it', async () => {
  const conv = uniqueId('mcp-appr');
  const a = await connect(keys.approver);
  const { answer, line, callId } = await startWaiting(a.client, conv);
  assert.equal(line, `call ${callId} (test.send) waits for approval: answer with decide_tool_call`);
  await waitFor('the log message', async () => a.logs.includes(line));

  const b = await connect(keys.approver);
  const listed = await tool(b.client, 'list_approvals', { conversation_id: conv });
  assert.notEqual(listed.isError, true, textOf(listed));
  const items = (listed.structuredContent as { approvals: Array<Record<string, unknown>> }).approvals;
  assert.equal(items.length, 1);
  assert.equal(items[0]!.call_id, callId);
  assert.equal(items[0]!.tool, 'test.send');
  assert.equal(items[0]!.params, '{"to":"a@example.com"}');
  assert.equal(items[0]!.reason, 'the user asked');
  assert.match(textOf(listed), new RegExp(`^call ${callId} \\(test\\.send\\) \\{"to":"a@example.com"\\}`));

  // Refusals: nothing is decided by any of them.
  const reader = await connect(keys.reader);
  const scope = await tool(reader.client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: callId,
    decision: 'approve',
  });
  assert.equal(scope.isError, true);
  assert.match(textOf(scope), /lacks the "approve" scope/);
  const foreign = await connect(keys.foreign);
  const other = await tool(foreign.client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: callId,
    decision: 'approve',
  });
  assert.equal(other.isError, true);
  assert.match(textOf(other), new RegExp(`no conversation "${conv}"`));
  const foreignList = await tool(foreign.client, 'list_approvals', { conversation_id: conv });
  assert.match(textOf(foreignList), new RegExp(`no conversation "${conv}"`));
  const unknown = await tool(b.client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: 'tc_000000000000',
    decision: 'approve',
  });
  assert.equal(unknown.isError, true);
  assert.match(textOf(unknown), /call tc_000000000000 is not waiting for approval/);
  assert.equal(runs.length, 0, 'nothing ran');
  const stillWaiting = await tool(b.client, 'list_approvals', { conversation_id: conv });
  assert.deepEqual(
    (stillWaiting.structuredContent as { approvals: Array<{ call_id: string }> }).approvals.map((x) => x.call_id),
    [callId],
  );

  const decided = await tool(b.client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: callId,
    decision: 'approve',
    reason: 'fine',
  });
  assert.notEqual(decided.isError, true, textOf(decided));
  assert.match(textOf(decided), new RegExp(`^call ${callId}: approved by `));
  const result = await answer;
  assert.notEqual(result.isError, true, textOf(result));
  assert.equal(textOf(result), 'done: sent to a@example.com');
  assert.equal(runs.length, 1);
  const none = await tool(b.client, 'list_approvals', { conversation_id: conv });
  assert.deepEqual((none.structuredContent as { approvals: unknown[] }).approvals, []);
  assert.equal(textOf(none), `no call of ${conv} waits for approval`);

  const again = await tool(b.client, 'decide_tool_call', { conversation_id: conv, call_id: callId, decision: 'deny' });
  assert.equal(again.isError, true);
  assert.match(textOf(again), new RegExp(`conversation ${conv}: .*(no running turn|already decided|not waiting)`));
  for (const r of [scope, other, unknown, again, decided, listed]) assert.doesNotMatch(textOf(r), /~/);
});

test('decide_tool_call deny: the answer tells the denial and its reason; the tool never ran', async () => {
  const conv = uniqueId('mcp-deny');
  const before = runs.length;
  const a = await connect(keys.approver);
  const { answer, callId } = await startWaiting(a.client, conv);
  const b = await connect(keys.approver);
  const denied = await tool(b.client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: callId,
    decision: 'deny',
    reason: 'not today',
  });
  assert.match(textOf(denied), /denied by /);
  const result = await answer;
  assert.match(textOf(result), /^not sent \(denied by .+: not today\)$/);
  assert.equal(runs.length, before);
});

test('elicitation: the waiting request carries a form for the call; accept approve is the decision', async () => {
  const conv = uniqueId('mcp-elicit');
  const forms: ElicitRequest[] = [];
  const before = runs.length;
  const e = await connect(keys.approver, async (r) => {
    forms.push(r);
    return { action: 'accept', content: { decision: 'approve', reason: 'looks right' } };
  });
  const { answer, line, callId } = await startWaiting(e.client, conv);
  assert.equal(
    line,
    `call ${callId} (test.send) waits for approval: answer with decide_tool_call, or the form sent with this request`,
  );
  const result = await answer;
  assert.notEqual(result.isError, true, textOf(result));
  assert.equal(textOf(result), 'done: sent to a@example.com');
  assert.equal(forms.length, 1);
  const params = forms[0]!.params as {
    message: string;
    requestedSchema: { properties: Record<string, { enum?: string[] }> };
  };
  assert.match(params.message, new RegExp(`test\\.send \\(call ${callId}\\) with \\{"to":"a@example.com"\\}`));
  assert.doesNotMatch(params.message, /~/);
  assert.deepEqual(params.requestedSchema.properties.decision?.enum, ['approve', 'deny']);
  assert.ok(!e.wire.some((m) => m.method === 'notifications/cancelled'), 'an answered form is not cancelled');
  assert.equal(runs.length, before + 1);
});

test('elicitation declined: nothing is decided, the turn still waits; decide_tool_call then approves it', async () => {
  const conv = uniqueId('mcp-decline');
  let asked = 0;
  const e = await connect(keys.approver, async () => {
    asked++;
    return { action: 'decline' };
  });
  const { answer, callId } = await startWaiting(e.client, conv);
  await waitFor('the declined message', async () =>
    e.logs.find(
      (m) =>
        m ===
        `call ${callId} (test.send): the form was declined; nothing decided, the turn still waits: answer with decide_tool_call`,
    ),
  );
  const b = await connect(keys.approver);
  const still = await tool(b.client, 'list_approvals', { conversation_id: conv });
  assert.equal((still.structuredContent as { approvals: Array<{ call_id: string }> }).approvals[0]?.call_id, callId);
  await tool(b.client, 'decide_tool_call', { conversation_id: conv, call_id: callId, decision: 'approve' });
  assert.equal(textOf(await answer), 'done: sent to a@example.com');
  assert.equal(asked, 1);
});

test('wait_turn on a turn that already waits: its first message names the call', async () => {
  const conv = uniqueId('mcp-late');
  const a = await connect(keys.approver);
  const started = await tool(a.client, 'start_turn', { prompt: 'send it', conversation_id: conv, wait: false });
  assert.notEqual(started.isError, true, textOf(started));
  const callId = await waitFor('a waiting call', async () => {
    const r = await tool(a.client, 'list_approvals', { conversation_id: conv });
    return (r.structuredContent as { approvals: Array<{ call_id: string }> }).approvals[0]?.call_id;
  });
  const progress: string[] = [];
  const answer = a.client.callTool(
    { name: 'wait_turn', arguments: { conversation_id: conv, turn_index: 1 } },
    undefined,
    { onprogress: (p) => progress.push(p.message ?? ''), timeout: 60_000 },
  ) as Promise<CallToolResult>;
  await waitFor('the waiting message', async () => progress.length > 0);
  assert.equal(progress[0], `call ${callId} (test.send) waits for approval: answer with decide_tool_call`);
  const b = await connect(keys.approver);
  await tool(b.client, 'decide_tool_call', { conversation_id: conv, call_id: callId, decision: 'approve' });
  assert.equal(textOf(await answer), 'done: sent to a@example.com');
});

test('an elicitation nobody answers (in-process pair, short form timeout): the message stands, decide_tool_call decides', async () => {
  const conv = uniqueId('mcp-noanswer');
  const server = createDreactMcpServer({
    client: stack.client,
    pool: stack.db.pool,
    principal: {
      tenantId: 'acme',
      projectId: 'web',
      userId: null,
      keyId: 'inproc',
      scopes: ['read', 'write', 'approve'],
    },
    approvals: { elicitTimeoutMs: 300 },
  });
  const client = new Client({ name: 'mcp-approvals-inproc', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
  let asked = 0;
  // A client that never answers the form (as a stateless transport's answer never reaches the waiting server).
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked++;
    return new Promise<ElicitResult>(() => undefined);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  open.push(client);
  const { answer, callId } = await startWaiting(client, conv);
  await waitFor('the unanswered message', async () =>
    logs.includes(
      `call ${callId} (test.send): the form got no answer; nothing decided, the turn still waits: answer with decide_tool_call`,
    ),
  );
  assert.equal(asked, 1);
  const decided = await tool(client, 'decide_tool_call', {
    conversation_id: conv,
    call_id: callId,
    decision: 'approve',
  });
  assert.notEqual(decided.isError, true, textOf(decided));
  assert.equal(textOf(await answer), 'done: sent to a@example.com');
  await server.close();
});

test('a decision made elsewhere withdraws the open form (notifications/cancelled for its request)', async () => {
  const conv = uniqueId('mcp-withdrawn');
  const e = await connect(keys.approver, () => new Promise<ElicitResult>(() => undefined));
  const { answer, callId } = await startWaiting(e.client, conv);
  const form = await waitFor('the form', async () => e.wire.find((m) => m.method === 'elicitation/create'));
  const b = await connect(keys.approver);
  await tool(b.client, 'decide_tool_call', { conversation_id: conv, call_id: callId, decision: 'approve' });
  assert.equal(textOf(await answer), 'done: sent to a@example.com');
  const cancelled = e.wire.filter((m) => m.method === 'notifications/cancelled');
  assert.deepEqual(
    cancelled.map((m) => m.params?.requestId),
    [form.id],
  );
  assert.ok(!e.logs.some((m) => /: the form (was|got)/.test(m)), e.logs.join(' | '));
});

test('a stateless start_turn (no session) gets the message and no form; a session decides', async () => {
  const conv = uniqueId('mcp-stateless');
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${keys.approver}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'start_turn',
        arguments: { prompt: 'send it', conversation_id: conv },
        _meta: { progressToken: 1 },
      },
    }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const messages: Array<{
    id?: number;
    method?: string;
    params?: { message?: string; data?: string };
    result?: CallToolResult;
  }> = [];
  let buffer = '';
  const next = async () => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('');
        if (data) return messages[messages.push(JSON.parse(data)) - 1]!;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffer += value;
    }
  };
  let line: string | undefined;
  while (!line) {
    const m = await next();
    if (m.method === 'notifications/progress' && /waits for approval/.test(m.params?.message ?? ''))
      line = m.params!.message;
  }
  const callId = /^call (tc_[0-9a-f]{12}) /.exec(line)?.[1];
  assert.equal(line, `call ${callId} (test.send) waits for approval: answer with decide_tool_call`);
  const b = await connect(keys.approver);
  await tool(b.client, 'decide_tool_call', { conversation_id: conv, call_id: callId, decision: 'approve' });
  let result: CallToolResult | undefined;
  while (!result) result = (await next()).result;
  assert.equal(textOf(result), 'done: sent to a@example.com');
  assert.ok(!messages.some((m) => m.method === 'elicitation/create'), 'no form on a stateless request');
  await reader.cancel().catch(() => undefined);
});
