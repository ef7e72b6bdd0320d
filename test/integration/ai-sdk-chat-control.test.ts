/**
 * The AI SDK chat protocol's control of a turn (issue 43), with the `ai` package's own `AbstractChat`
 * (what `useChat` wraps) and `DefaultChatTransport`, against the real gateway, Temporal dev server
 * and Postgres: a tool call waiting for approval pauses the response and `addToolApprovalResponse`
 * (sent by `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`) decides it
 * through `decideToolCall` — approved it runs, denied it does not, the reason kept — and the same
 * message goes on; `stop()` detaches without ending the turn (the native cancel route ends it); a
 * message sent while the turn runs joins it (a followup, or a steer when asked).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { sendTool } from '../support/approval-tool';
import type { DreactUIMessage } from '../../core/ai-sdk/ui-message-chunks';
import { createApiKey } from '../../store/tenancy-store';

const { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } =
  require('ai') as typeof import('ai', {
    with: { 'resolution-mode': 'import' },
  });
type ChatInit = ConstructorParameters<typeof AbstractChat<DreactUIMessage>>[0];

const KEY = 'ai-sdk-control-key';
let stack: TestStack;
let gw: RunningGateway;
const sent: Array<Record<string, unknown>> = [];
const send = sendTool(sent, { answer: (params) => `sent to ${String(params.to)}` });

before(async () => {
  stack = await createTestStack('ai_sdk_control');
  await stack.startWorker({ extraTools: [send] });
  gw = await stack.startGateway({ apiKeys: [KEY], allowScripted: true, pollMs: 100 });
});
after(async () => {
  await stack?.teardown();
});

type Script = { rounds: string[]; chunkSize?: number; latencyMs?: number };

/** A chat as `useChat` holds one: the SDK's AbstractChat over a plain state. */
class TestChat extends AbstractChat<DreactUIMessage> {
  readonly finished: DreactUIMessage[] = [];
  constructor(init: Omit<ChatInit, 'state'>) {
    const state: ChatInit['state'] = {
      status: 'ready',
      error: undefined,
      messages: [],
      pushMessage(m) {
        this.messages = [...this.messages, m];
      },
      popMessage() {
        this.messages = this.messages.slice(0, -1);
      },
      replaceMessage(i, m) {
        this.messages = this.messages.map((x, j) => (j === i ? m : x));
      },
      snapshot: (v) => structuredClone(v),
    };
    super({ ...init, state });
  }
}

function chatFor(script: Script, key = KEY, extra: Partial<ChatInit> = {}) {
  const bodies: Array<{ messages: DreactUIMessage[]; inject?: string }> = [];
  const chat = new TestChat({
    id: uniqueId('chat'),
    transport: new DefaultChatTransport<DreactUIMessage>({
      api: `${gw.url}/v1/ai-sdk/chat`,
      headers: { 'x-api-key': key },
      body: { options: { model: { provider: 'scripted', script } } },
      fetch: async (url, init) => {
        if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
        return fetch(url, init);
      },
    }),
    onError: () => undefined,
    ...extra,
  });
  return { chat, bodies };
}

const toolParts = (m: DreactUIMessage | undefined) =>
  (m?.parts ?? []).filter((p) => p.type === 'dynamic-tool') as Array<{
    toolCallId: string;
    toolName: string;
    state: string;
    output?: unknown;
    approval?: { id: string; approved?: boolean; reason?: string };
  }>;
const texts = (m: DreactUIMessage | undefined) =>
  (m?.role === 'assistant' ? m.parts : []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);

async function decidedEvent(callId: string) {
  const r = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE kind = 'approval' AND payload->>'callId' = $1 AND payload->>'phase' = 'decided'`,
    [callId],
  );
  return r.rows[0]?.payload as { decision: string; reason?: string } | undefined;
}

/** The statuses of the chat's turns, as the gateway's state route tells them. */
async function turnStatuses(chatId: string): Promise<string[]> {
  const res = await fetch(`${gw.url}/v1/conversations/${chatId}/state`, { headers: { 'x-api-key': KEY } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { turns: Array<{ status: string }> }).turns.map((t) => t.status);
}

/** Waits for the chat to settle (`ready`) with the turn's finish in its last message. */
const settled = (chat: TestChat, what: string) =>
  waitFor(
    what,
    async () => chat.status === 'ready' && assistantOf(chat)?.metadata?.completionPath !== undefined,
    30_000,
  );
/** The chat's (one) assistant message: a message sent while the turn runs comes after it. */
const assistantOf = (chat: TestChat) => chat.messages.find((m) => m.role === 'assistant');

test('an approval pauses the response; addToolApprovalResponse approves it through decideToolCall and the same message goes on', async () => {
  sent.length = 0;
  const { chat, bodies } = chatFor(
    { rounds: [callTool('test.send', { to: 'a@example.com' }, 'the user asked'), complete('Sent.')] },
    KEY,
    { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses },
  );
  await chat.sendMessage({ text: 'send it' });
  // The response ended at the request: the chat is ready, the tool part waits for the user.
  assert.equal(chat.status, 'ready');
  const [waiting] = toolParts(chat.lastMessage);
  assert.equal(waiting?.toolName, 'test.send');
  assert.equal(waiting?.state, 'approval-requested');
  assert.equal(waiting?.approval?.id, waiting?.toolCallId);
  assert.deepEqual(sent, [], 'nothing runs before the decision');
  assert.equal(chat.lastMessage?.metadata?.completionPath, undefined, 'the turn is not over');
  // A resumed stream (a reload: useChat's resume) replays the turn and pauses at the same request.
  const before = structuredClone(chat.lastMessage);
  await chat.resumeStream();
  assert.equal(chat.status, 'ready');
  assert.deepEqual(chat.lastMessage, before, 'the replay is the paused message again');

  await chat.addToolApprovalResponse({ id: waiting!.approval!.id, approved: true, reason: 'fine' });
  await settled(chat, 'the continued message');
  assert.equal(chat.messages.length, 2, 'one user message, one assistant message: the same one went on');
  const [ran] = toolParts(chat.lastMessage);
  assert.equal(ran?.state, 'output-available');
  assert.equal(ran?.output, 'sent to a@example.com');
  assert.equal(texts(chat.lastMessage).at(-1), 'Sent.');
  assert.equal(chat.lastMessage?.metadata?.completionPath, 'complete');
  assert.deepEqual(sent, [{ to: 'a@example.com' }]);
  const decided = await decidedEvent(waiting!.toolCallId);
  assert.equal(decided?.decision, 'approve');
  assert.equal(decided?.reason, 'fine');
  // What the SDK sent back: the assistant message with the answered part.
  assert.equal(bodies.length, 2);
  const answered = toolParts(bodies[1]!.messages.at(-1));
  assert.equal(answered[0]?.state, 'approval-responded');
});

test('a denial with a reason: the tool never runs, the part is output-denied and the turn answers without it', async () => {
  sent.length = 0;
  const { chat } = chatFor(
    { rounds: [callTool('test.send', { to: 'b@example.com' }), complete('Not sent, as you asked.')] },
    KEY,
    { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses },
  );
  await chat.sendMessage({ text: 'send it' });
  const [waiting] = toolParts(chat.lastMessage);
  assert.equal(waiting?.state, 'approval-requested');
  await chat.addToolApprovalResponse({ id: waiting!.approval!.id, approved: false, reason: 'wrong address' });
  await settled(chat, 'the message after the denial');
  const [denied] = toolParts(chat.lastMessage);
  assert.equal(denied?.state, 'output-denied');
  assert.equal(texts(chat.lastMessage).at(-1), 'Not sent, as you asked.');
  assert.deepEqual(sent, []);
  const decided = await decidedEvent(waiting!.toolCallId);
  assert.equal(decided?.decision, 'deny');
  assert.equal(decided?.reason, 'wrong address');
});

test('answering needs the approve scope (403, nothing decided); an answer no call waits on is a 404', async () => {
  sent.length = 0;
  const writer = await createApiKey(stack.db.pool, {
    tenantId: 'local',
    projectId: 'default',
    userId: null,
    scopes: ['read', 'write'],
  });
  const script = { rounds: [callTool('test.send', { to: 'c@example.com' }), complete('Sent.')] };
  const { chat } = chatFor(script, writer.key);
  await chat.sendMessage({ text: 'send it' });
  const [waiting] = toolParts(chat.lastMessage);
  assert.equal(waiting?.state, 'approval-requested');
  await chat.addToolApprovalResponse({ id: waiting!.approval!.id, approved: true });
  await chat.sendMessage();
  assert.equal(chat.status, 'error');
  assert.match(String(chat.error?.message), /approve scope/);
  assert.equal(await decidedEvent(waiting!.toolCallId), undefined);
  assert.deepEqual(sent, []);
  // The same answer with a key that may approve goes through; resent, no call waits on it any more.
  const res = () =>
    fetch(`${gw.url}/v1/ai-sdk/chat`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: chat.id,
        messages: chat.messages,
        trigger: 'submit-message',
        options: { model: { provider: 'scripted', script } },
      }),
    });
  const ok = await res();
  assert.equal(ok.status, 200);
  await ok.text();
  assert.deepEqual(sent, [{ to: 'c@example.com' }]);
  const stale = await res();
  assert.equal(stale.status, 404);
  const body = (await stale.json()) as { error: { message: string } };
  assert.match(body.error.message, /no tool call "tc_[0-9a-f]+" waits for approval/);
});

const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

test('stop() detaches: the turn runs on, resumeStream() shows it whole; the native cancel route ends a turn', async () => {
  const script = {
    rounds: [callTool('react.plan', { mode: 'new', steps: ['a'] }), complete(`done: ${LONG}`)],
    chunkSize: 3,
    latencyMs: 25,
  };
  const { chat } = chatFor(script);
  const sending = chat.sendMessage({ text: 'go' });
  await waitFor(
    'some answer text',
    async () => texts(chat.lastMessage).join('').length > 0 || toolParts(chat.lastMessage).length > 0,
  );
  await chat.stop();
  await sending;
  assert.equal(chat.status, 'ready');
  assert.deepEqual(await turnStatuses(chat.id), ['running'], 'stop() left the turn running');
  await chat.resumeStream();
  await settled(chat, 'the resumed message');
  assert.equal(texts(chat.lastMessage).at(-1), `done: ${LONG}`);
  assert.equal(chat.lastMessage?.metadata?.completionPath, 'complete');

  // Cancelling is asked for explicitly: POST …/turns/:turn/cancel, and the chat's stream ends with it.
  const second = chatFor({ ...script, latencyMs: 60 }).chat;
  const streaming = second.sendMessage({ text: 'go' });
  await waitFor('the second turn streaming', async () => toolParts(second.lastMessage).length > 0);
  const cancel = await fetch(`${gw.url}/v1/conversations/${second.id}/turns/1/cancel`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'enough' }),
  });
  assert.equal(cancel.status, 202, await cancel.clone().text());
  await streaming;
  assert.equal(second.lastMessage?.metadata?.completionPath, 'cancelled');
});

/** Round 1 is streaming its reasoning (slowly): a message sent now reaches the turn mid-round. */
const reasoning = (chat: TestChat) =>
  waitFor('round 1 streaming', async () => assistantOf(chat)?.parts.some((p) => p.type === 'reasoning') ?? false);
const steeringParts = (m: DreactUIMessage) =>
  m.parts.filter((p) => p.type === 'steering-message') as Array<{ id: string; parts: Array<{ text: string }> }>;

test('a message sent while the turn runs joins it as a followup: one turn, a steering-message part, the turn answers it', async () => {
  const script = {
    rounds: [callTool('react.plan', { mode: 'new', steps: ['a'] }), complete('answered, the followup too')],
    chunkSize: 3,
    latencyMs: 25,
  };
  const { chat, bodies } = chatFor(script);
  const first = chat.sendMessage({ text: 'go' });
  await reasoning(chat);
  const second = chat.sendMessage({ text: 'also this' });
  await Promise.all([first, second]);
  await settled(chat, 'the joined turn');
  assert.deepEqual(await turnStatuses(chat.id), ['completed'], 'the followup started no turn of its own');
  assert.deepEqual(
    chat.messages.map((m) => m.role),
    ['user', 'assistant', 'user'],
    "the turn's message was rebuilt in place; the user message stays where the client put it",
  );
  const assistant = assistantOf(chat)!;
  const steering = steeringParts(assistant);
  assert.equal(steering.length, 1);
  assert.equal(steering[0]!.parts[0]!.text, 'also this');
  assert.equal(steering[0]!.id, bodies[1]!.messages.at(-1)!.id, 'the part names the message the user sent');
  // Taken at the round boundary: the tool call of round 1 ran, the part comes before round 2's step.
  const types = assistant.parts.map((p) => p.type);
  assert.ok(types.indexOf('dynamic-tool') < types.indexOf('steering-message'));
  assert.equal(types[types.indexOf('steering-message') + 1], 'step-start');
  assert.equal(toolParts(assistant)[0]?.state, 'output-available');
  assert.equal(texts(assistant).at(-1), 'answered, the followup too');
  assert.equal(assistant.metadata?.completionPath, 'complete');
});

test("with inject: 'steer' the message steers the running turn: its round stops, the turn answers with it in mind", async () => {
  const script = {
    rounds: [callTool('react.plan', { mode: 'new', steps: ['a'] }), complete('never: the steer ends the turn')],
    chunkSize: 3,
    latencyMs: 25,
  };
  const { chat } = chatFor(script);
  const first = chat.sendMessage({ text: 'go' });
  await reasoning(chat);
  const second = chat.sendMessage({ text: 'stop and say so' }, { body: { inject: 'steer' } });
  await Promise.all([first, second]);
  await settled(chat, 'the steered turn');
  assert.deepEqual(await turnStatuses(chat.id), ['completed']);
  const assistant = assistantOf(chat)!;
  assert.equal(steeringParts(assistant)[0]?.parts[0]?.text, 'stop and say so');
  assert.deepEqual(toolParts(assistant), [], 'the steered round stopped before its tool call');
  // The finalize round answers with the steer in mind (the scripted model says so).
  assert.equal(texts(assistant).at(-1), 'Stopped as asked: stop and say so');
  assert.equal(assistant.metadata?.completionPath, 'steer_finalize');
});
