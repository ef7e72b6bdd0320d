/**
 * AG-UI 1.0 (issue 43 item 1) end to end: `@ag-ui/client`'s HttpAgent against the real gateway's
 * `POST /v1/ag-ui`, a real Temporal dev server, Postgres and the scripted model — a turn with tool
 * calls (react.plan's plan and react.write's canvas as state), an approval surfaced as an interrupt
 * and resumed by the next run, a connection cut mid-answer and resumed by `Last-Event-ID` losing
 * and duplicating nothing, and bad input refused with the field named and nothing written.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { callTool, complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { sendTool } from '../support/approval-tool';
import { conversationOwner, createApiKey } from '../../store/tenancy-store';

const KEY = 'agui-key';
let stack: TestStack;
let gw: RunningGateway;
const sent: Array<Record<string, unknown>> = [];

const send = sendTool(sent, { answer: (params) => `sent to ${String(params.to)}` });

before(async () => {
  stack = await createTestStack('agui');
  await stack.startWorker({ extraTools: [send] });
  gw = await stack.startGateway({ apiKeys: [KEY], allowScripted: true, pollMs: 100 });
});
after(async () => {
  await stack?.teardown();
});

const script = (rounds: string[], extra: Record<string, unknown> = {}) => ({
  options: {
    model: {
      provider: 'scripted',
      script: { rounds, chunkSize: 256, structured: { conversation_title: { title: 'AG-UI' } }, ...extra },
    },
  },
});

/** A final round whose answer streams on the answer channel (chunk by chunk, with the script's latency). */
const streamedAnswer = (answer: string) =>
  thinking('answering') +
  decision({ action: 'complete', notes: 'answer' }) +
  `<channel:answer>${answer}</channel:answer>`;

function agentFor(threadId: string, fetchImpl?: typeof fetch): HttpAgent {
  return new HttpAgent({
    url: `${gw.url}/v1/ag-ui`,
    headers: { 'x-api-key': KEY },
    threadId,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

async function run(agent: HttpAgent, params: Parameters<HttpAgent['runAgent']>[0]): Promise<BaseEvent[]> {
  const events: BaseEvent[] = [];
  await agent.runAgent(params, { onEvent: ({ event }) => void events.push(event) });
  return events;
}

const ofType = <T extends BaseEvent>(events: BaseEvent[], type: EventType) =>
  events.filter((e) => e.type === type) as Array<T & Record<string, unknown>>;

test('a run is a turn: tool calls, plan and canvas as state, the answer as a text message', async () => {
  const agent = agentFor(uniqueId('thread'));
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'plan it and write the report' });
  const events = await run(agent, {
    forwardedProps: script([
      callTool('react.plan', { mode: 'new', steps: ['collect', 'write'] }),
      callTool('react.write', {
        path: 'report.md',
        channel: 'canvas',
        content: '# Report\n\nAll good.',
        kind: 'display',
      }),
      complete('The report is written.'),
    ]),
  });
  assert.equal(events[0]!.type, EventType.RUN_STARTED);
  const last = events.at(-1) as BaseEvent & { outcome?: { type: string }; result?: { answer: string } };
  assert.equal(last.type, EventType.RUN_FINISHED);
  assert.equal(last.outcome?.type, 'success');
  assert.equal(last.result?.answer, 'The report is written.');

  const starts = ofType<BaseEvent>(events, EventType.TOOL_CALL_START);
  assert.deepEqual(
    starts.map((s) => s.toolCallName),
    ['react.plan', 'react.write'],
  );
  const results = ofType<BaseEvent>(events, EventType.TOOL_CALL_RESULT);
  assert.deepEqual(
    results.map((r) => r.toolCallId),
    starts.map((s) => s.toolCallId),
  );
  const args = ofType<BaseEvent>(events, EventType.TOOL_CALL_ARGS).map((a) => JSON.parse(String(a.delta)));
  assert.deepEqual(args[0], { mode: 'new', steps: ['collect', 'write'] });
  // One step per round, each closed.
  const steps = ofType<BaseEvent>(events, EventType.STEP_STARTED).map((s) => s.stepName);
  assert.deepEqual(steps, ['round 1', 'round 2', 'round 3']);
  assert.deepEqual(
    ofType<BaseEvent>(events, EventType.STEP_FINISHED).map((s) => s.stepName),
    steps,
  );
  assert.ok(ofType(events, EventType.STATE_DELTA).length >= 2, 'plan and canvas changes arrive as state deltas');

  const state = agent.state as {
    plans: Record<string, { steps: Array<{ text: string }> }>;
    canvases: Record<string, { text: string; mime: string }>;
  };
  const plans = Object.values(state.plans);
  assert.equal(plans.length, 1);
  assert.deepEqual(
    plans[0]!.steps.map((s) => s.text),
    ['collect', 'write'],
  );
  const canvas = state.canvases['fi:turn_1.files/report.md'];
  assert.equal(canvas?.text, '# Report\n\nAll good.');

  const texts = agent.messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content);
  assert.deepEqual(
    texts.map((m) => m.content),
    ['The report is written.'],
  );
  assert.equal(agent.messages.filter((m) => m.role === 'tool').length, 2);
});

test('an approval is an interrupt; the next run resumes it through decideToolCall', async () => {
  const agent = agentFor(uniqueId('thread'));
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'send it' });
  const first = await run(agent, {
    forwardedProps: script([callTool('test.send', { to: 'a@example.com' }, 'the user asked'), complete('Sent.')]),
  });
  const finished = first.at(-1) as BaseEvent & {
    outcome?: {
      type: string;
      interrupts?: Array<{ id: string; reason: string; toolCallId?: string; metadata?: unknown }>;
    };
  };
  assert.equal(finished.type, EventType.RUN_FINISHED);
  assert.equal(finished.outcome?.type, 'interrupt');
  const [interrupt] = finished.outcome!.interrupts!;
  const call = ofType<BaseEvent>(first, EventType.TOOL_CALL_START)[0]!;
  assert.equal(interrupt!.toolCallId, call.toolCallId);
  assert.equal(interrupt!.reason, 'tool_approval');
  assert.deepEqual(interrupt!.metadata, { tool: 'test.send', params: { to: 'a@example.com' } });
  assert.deepEqual(
    agent.pendingInterrupts.map((i) => i.id),
    [interrupt!.id],
  );
  assert.deepEqual(sent, [], 'nothing runs before the decision');

  // Answering needs the approve scope: a key with read and write only is a 403, and nothing runs.
  const writer = await createApiKey(stack.db.pool, {
    tenantId: 'local',
    projectId: 'default',
    userId: null,
    scopes: ['read', 'write'],
  });
  const resumeAs = (key: string, interruptId: string) =>
    fetch(`${gw.url}/v1/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        threadId: agent.threadId,
        runId: randomUUID(),
        messages: [],
        resume: [{ interruptId, status: 'resolved', payload: { decision: 'approve' } }],
      }),
    });
  const forbidden = await resumeAs(writer.key, interrupt!.id);
  assert.equal(forbidden.status, 403, await forbidden.clone().text());
  assert.match(((await forbidden.json()) as { error: { message: string } }).error.message, /approve/);
  assert.deepEqual(sent, []);

  // A run that leaves the interrupt unanswered is refused by the client itself.
  await assert.rejects(run(agent, {}), /pending interrupt/);

  const second = await run(agent, {
    resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { decision: 'approve', reason: 'fine' } }],
  });
  assert.equal(second[0]!.type, EventType.RUN_STARTED);
  const result = ofType<BaseEvent>(second, EventType.TOOL_CALL_RESULT);
  assert.deepEqual(
    result.map((r) => [r.toolCallId, r.content]),
    [[call.toolCallId, 'sent to a@example.com']],
  );
  const done = second.at(-1) as BaseEvent & { outcome?: { type: string }; result?: { answer: string } };
  assert.equal(done.outcome?.type, 'success');
  assert.equal(done.result?.answer, 'Sent.');
  assert.deepEqual(sent, [{ to: 'a@example.com' }]);
  assert.deepEqual(agent.pendingInterrupts, []);
  // The decision is the approval path's: recorded with who decided.
  const decided = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE kind = 'approval' AND payload->>'callId' = $1 AND payload->>'phase' = 'decided'`,
    [call.toolCallId],
  );
  assert.equal(decided.rows[0]?.payload.decision, 'approve');
  // An interrupt no call waits on any more: 404 naming it.
  const stale = await resumeAs(KEY, interrupt!.id);
  assert.equal(stale.status, 404);
  assert.match(
    ((await stale.json()) as { error: { message: string } }).error.message,
    /no tool call "tc_[0-9a-f]+" waits/,
  );
});

/**
 * A fetch that passes the response through frame by frame, noting each frame's SSE id, and drops
 * the connection (the agent's own abort, as a closed tab or a lost network does) after the first
 * frame with an id that `cutAfter` picks.
 */
function cuttingFetch(
  cutAfter: (frame: string) => boolean,
  seen: { lastId?: string; ids: number[] },
  drop: () => void,
): typeof fetch {
  return async (url, init) => {
    const res = await fetch(url, init);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    const enc = new TextEncoder();
    let buf = '';
    let cut = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        if (cut) {
          drop();
          ctrl.error(new DOMException('the test dropped the connection', 'AbortError'));
          return;
        }
        const { value, done } = await reader.read();
        if (done) return ctrl.close();
        buf += dec.decode(value, { stream: true });
        let i: number;
        while (!cut && (i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i + 2);
          buf = buf.slice(i + 2);
          ctrl.enqueue(enc.encode(frame));
          const id = /^id: (\d+)$/m.exec(frame)?.[1];
          if (id) {
            seen.lastId = id;
            seen.ids.push(Number(id));
            if (cutAfter(frame)) cut = true;
          }
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

test('a connection cut mid-answer resumes by Last-Event-ID: nothing lost, nothing repeated', async () => {
  const answer = Array.from({ length: 30 }, (_, i) => `sentence ${i + 1} of a long streamed answer.`).join(' ');
  const seen: { lastId?: string; ids: number[] } = { ids: [] };
  let contents = 0;
  const agent: HttpAgent = agentFor(
    uniqueId('thread'),
    cuttingFetch(
      (frame) => frame.includes('TEXT_MESSAGE_CONTENT') && ++contents === 3,
      seen,
      () => agent.abortRun(),
    ),
  );
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'answer at length' });
  const runId = randomUUID();
  const firstEvents: BaseEvent[] = [];
  await agent.runAgent(
    {
      runId,
      forwardedProps: script([callTool('react.plan', { mode: 'new', steps: ['think'] }), streamedAnswer(answer)], {
        chunkSize: 8,
        latencyMs: 15,
      }),
    },
    { onEvent: ({ event }) => void firstEvents.push(event) },
  );
  assert.ok(seen.lastId, 'the cut came after events with ids');
  assert.notEqual(firstEvents.at(-1)?.type, EventType.RUN_FINISHED, 'the cut came before the run finished');
  const before = ofType<BaseEvent>(firstEvents, EventType.TEXT_MESSAGE_CONTENT)
    .map((e) => String(e.delta))
    .join('');
  assert.ok(
    before.length > 0 && before.length < answer.length,
    `the cut came mid-answer (${before.length} chars seen)`,
  );
  assert.equal(ofType(firstEvents, EventType.TEXT_MESSAGE_END).length, 0, 'the message was open at the cut');

  // Reconnect: the same run, from the last event seen whole (a plain fetch now).
  const idsBefore = [...seen.ids];
  const resumedSeen: { ids: number[] } = { ids: [] };
  const tracking = agentFor(
    agent.threadId,
    cuttingFetch(
      () => false,
      resumedSeen,
      () => undefined,
    ),
  );
  tracking.messages = agent.messages;
  tracking.state = agent.state;
  tracking.headers = { ...tracking.headers, 'Last-Event-ID': seen.lastId! };
  const secondEvents = await run(tracking, { runId });
  const last = secondEvents.at(-1) as BaseEvent & { runId?: string; result?: { answer: string } };
  assert.equal(last.type, EventType.RUN_FINISHED);
  assert.equal(last.runId, runId);
  assert.equal(last.result?.answer, answer);

  // Offsets: strictly increasing across both connections, none seen twice.
  const ids = [...idsBefore, ...resumedSeen.ids];
  assert.deepEqual(
    ids,
    [...new Set(ids)].sort((a, b) => a - b),
  );
  // The text: the deltas of both connections together are the answer, once.
  const all = [...firstEvents, ...secondEvents];
  const text = ofType<BaseEvent>(all, EventType.TEXT_MESSAGE_CONTENT)
    .map((e) => String(e.delta))
    .join('');
  assert.equal(text, answer);
  assert.equal(ofType(all, EventType.TOOL_CALL_START).length, 1);
  assert.equal(ofType(all, EventType.TOOL_CALL_RESULT).length, 1);
  const texts = tracking.messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content);
  assert.deepEqual(
    texts.map((m) => m.content),
    [answer],
  );
});

test('bad input: a clear 400 naming the field, nothing written', async () => {
  const threadId = uniqueId('thread');
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/v1/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
      body: JSON.stringify(body),
    });
  const noUser = await post({ threadId, runId: 'r1', messages: [{ id: 'a1', role: 'assistant', content: 'hi' }] });
  assert.equal(noUser.status, 400);
  assert.match(((await noUser.json()) as { error: { message: string } }).error.message, /messages: no user message/);
  const noThread = await post({ runId: 'r1', messages: [] });
  assert.equal(noThread.status, 400);
  assert.match(((await noThread.json()) as { error: { message: string } }).error.message, /RunAgentInput threadId/);
  const badResume = await post({
    threadId,
    runId: 'r2',
    messages: [],
    resume: [{ interruptId: 'tc_000000000000', status: 'resolved' }],
  });
  assert.equal(badResume.status, 404);
  const badOffset = await post(
    { threadId, runId: 'r4', messages: [{ id: 'u1', role: 'user', content: 'hi' }] },
    { 'last-event-id': '1e3' },
  );
  assert.equal(badOffset.status, 400);
  assert.match(((await badOffset.json()) as { error: { message: string } }).error.message, /Last-Event-ID must be/);
  const unauth = await post({ threadId, runId: 'r3', messages: [] }, { 'x-api-key': 'wrong' });
  assert.equal(unauth.status, 401);
  assert.equal(await conversationOwner(stack.db.pool, `local~default~${threadId}`), undefined);
  assert.equal(await conversationOwner(stack.db.pool, threadId), undefined);
});
