/**
 * The Vercel AI SDK's chat protocol over the gateway (issue 43 item 2), with the `ai` package's
 * own client: `DefaultChatTransport` (sendMessages / reconnectToStream, what `useChat` calls) and
 * `readUIMessageStream` (the message `useChat` holds), against the real gateway, Temporal dev
 * server and Postgres. A turn with tool calls, a canvas and a plan as UI message parts; a resume
 * after a dropped connection; and a resume, through a restarted gateway, after a kill -9 of the
 * worker mid-round — the resumed message equals an uninterrupted run's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawnWorkerProcess } from '../support/worker-process';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import type { DreactUIChunk, DreactUIMessage } from '../../core/ai-sdk/ui-message-chunks';

const { DefaultChatTransport, readUIMessageStream } = require('ai') as typeof import('ai', {
  with: { 'resolution-mode': 'import' },
});

const KEY = 'ai-sdk-key';
let stack: TestStack;
let gw: RunningGateway;

const gateway = () =>
  startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [KEY],
    port: 0,
    pollMs: 100,
    log: () => undefined,
  });

before(async () => {
  stack = await createTestStack('ai_sdk_chat');
  await stack.startWorker();
  gw = await gateway();
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

type Script = { rounds: string[]; chunkSize?: number; latencyMs?: number };

function transport(script: Script, url = gw.url) {
  return new DefaultChatTransport<DreactUIMessage>({
    api: `${url}/v1/ai-sdk/chat`,
    headers: { 'x-api-key': KEY },
    body: { options: { model: { provider: 'scripted', script } } },
  });
}

const userMessage = (text: string) => ({
  id: uniqueId('msg'),
  role: 'user' as const,
  parts: [{ type: 'text' as const, text }],
});

/** The transport's chunks, typed with our data parts (the transport parses them with the SDK's chunk schema). */
const ours = (s: ReadableStream<unknown>) => s as ReadableStream<DreactUIChunk>;

async function send(script: Script, chatId: string, text: string, abortSignal?: AbortSignal) {
  return ours(
    await transport(script).sendMessages({
      chatId,
      messages: [userMessage(text)],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal,
    }),
  );
}

/** Reads a chunk stream to its end: the chunks and the message as readUIMessageStream folds them. */
async function readAll(
  stream: ReadableStream<DreactUIChunk>,
): Promise<{ chunks: DreactUIChunk[]; message: DreactUIMessage }> {
  const chunks: DreactUIChunk[] = [];
  const tee = stream.pipeThrough(
    new TransformStream<DreactUIChunk, DreactUIChunk>({
      transform(c, ctl) {
        chunks.push(c);
        ctl.enqueue(c);
      },
    }),
  );
  let last: DreactUIMessage | undefined;
  for await (const m of readUIMessageStream<DreactUIMessage>({ stream: tee, terminateOnError: true })) last = m;
  assert.ok(last, 'the stream made a message');
  return { chunks, message: JSON.parse(JSON.stringify(last)) as DreactUIMessage };
}

/** Reads chunks until `until` holds, then drops the connection (the client goes away). */
async function readUntilDropped(
  stream: ReadableStream<DreactUIChunk>,
  abort: AbortController,
  until: (seen: DreactUIChunk[]) => boolean,
): Promise<DreactUIChunk[]> {
  const seen: DreactUIChunk[] = [];
  const reader = stream.getReader();
  while (!until(seen)) {
    const r = await reader.read();
    assert.ok(!r.done, 'the stream ended before the point the test drops it');
    seen.push(r.value);
  }
  abort.abort();
  await reader.cancel().catch(() => undefined);
  return seen;
}

/** The message without what a run names (chat, tool call and part ids, usage): what two runs share. */
function shape(m: DreactUIMessage): unknown {
  const ids = new Map<string, string>();
  const id = (v: string) => ids.get(v) ?? (ids.set(v, `id${ids.size}`), `id${ids.size - 1}`);
  return JSON.parse(
    JSON.stringify({ ...m, id: 'm', metadata: { ...m.metadata, turnId: 't' } }, (k, v) =>
      (k === 'toolCallId' || k === 'id') && typeof v === 'string'
        ? id(v)
        : k === 'usage'
          ? undefined
          : k === 'url' && typeof v === 'string'
            ? v.replace(/\/conversations\/[^/]+\//, '/conversations/<chat>/')
            : v,
    ),
  );
}

const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
const slowScript = (): Script => ({
  rounds: [
    callTool('react.write', { path: 'notes.md', channel: 'canvas', content: '# Notes\nfirst line', kind: 'file' }),
    complete(`the notes are written: ${LONG}`),
  ],
  chunkSize: 3,
  latencyMs: 30,
});

test('a turn with a tool call, a canvas and a plan as UI message parts; the finish carries the turn', async () => {
  const chat = uniqueId('chat');
  const { chunks, message } = await readAll(
    await send(
      {
        rounds: [
          callTool('react.plan', { mode: 'new', steps: ['write', 'answer'] }),
          callTool('react.write', { path: 'notes.md', channel: 'canvas', content: '# Notes\nhello', kind: 'file' }),
          complete('wrote the notes'),
        ],
      },
      chat,
      'plan, write notes, answer',
    ),
  );
  assert.equal(chunks[0]?.type, 'start');
  assert.equal(chunks.at(-1)?.type, 'finish');
  assert.equal(chunks.filter((c) => c.type === 'start-step').length, 3, 'a step per round');
  const tools = message.parts.filter((p) => p.type === 'dynamic-tool');
  assert.deepEqual(
    tools.map((t) => [t.toolName, t.state]),
    [
      ['react.plan', 'output-available'],
      ['react.write', 'output-available'],
    ],
  );
  assert.deepEqual((tools[1] as { input: unknown }).input, {
    path: 'notes.md',
    channel: 'canvas',
    content: '# Notes\nhello',
    kind: 'file',
  });
  const canvas = message.parts.find((p) => p.type === 'data-canvas') as { data: { text: string; mime: string } };
  assert.equal(canvas.data.text, '# Notes\nhello');
  assert.match(canvas.data.mime, /markdown/);
  const plan = message.parts.find((p) => p.type === 'data-plan') as unknown as {
    data: { steps: Array<{ text: string }> };
  };
  assert.deepEqual(
    plan.data.steps.map((s) => s.text),
    ['write', 'answer'],
  );
  const text = message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
  assert.equal(text.at(-1), 'wrote the notes');
  assert.equal(message.metadata?.completionPath, 'complete');
  // The turn is the conversation's (its stored result is the same answer), and nothing is active any more.
  const stored = await fetch(`${gw.url}/v1/conversations/${chat}`, { headers: { 'x-api-key': KEY } });
  assert.equal(stored.status, 200);
  assert.equal(await transport({ rounds: [] }).reconnectToStream({ chatId: chat }), null, 'no active turn: 204');
});

test('bad input is a 400 naming the field, and starts nothing', async () => {
  const chat = uniqueId('chat');
  const res = await fetch(`${gw.url}/v1/ai-sdk/chat`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: chat,
      messages: [{ id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }],
    }),
  });
  assert.equal(res.status, 400);
  assert.match(JSON.stringify(await res.json()), /messages\[0\]\.role/);
  const stream = await fetch(`${gw.url}/v1/ai-sdk/chat/${chat}/stream`, { headers: { 'x-api-key': KEY } });
  assert.equal(stream.status, 404, 'no conversation was made');
});

test('resume after a dropped connection: reconnectToStream replays the active turn from the log; the message equals an uninterrupted one', async () => {
  const control = await readAll(await send(slowScript(), uniqueId('chat'), 'write notes'));
  const chat = uniqueId('chat');
  const abort = new AbortController();
  const seen = await readUntilDropped(await send(slowScript(), chat, 'write notes', abort.signal), abort, (s) =>
    s.some((c) => c.type === 'tool-input-available'),
  );
  assert.ok(!seen.some((c) => c.type === 'finish'));
  const resumed = await transport(slowScript()).reconnectToStream({ chatId: chat });
  assert.ok(resumed, 'the turn is active: a stream, not 204');
  const { chunks, message } = await readAll(ours(resumed));
  assert.equal(chunks[0]?.type, 'start', 'a replay from the start of the turn');
  assert.deepEqual(chunks.slice(0, seen.length), seen, 'the replay begins with what the client had seen');
  assert.deepEqual(shape(message), shape(control.message));
});

const spawnWorker = (): ChildProcess => spawnWorkerProcess(stack);

test('resume after a kill -9 of the worker mid-round, through a restarted gateway: the message equals an uninterrupted one', async () => {
  const control = await readAll(await send(slowScript(), uniqueId('chat'), 'write notes'));
  // The turn runs on a worker process of its own (the in-process one stops polling).
  await stack.stopWorker();
  let worker = spawnWorker();
  try {
    const chat = uniqueId('chat');
    const abort = new AbortController();
    const stream = await send(slowScript(), chat, 'write notes', abort.signal);
    // Round 2 is streaming its answer: the tool ran, some text came.
    const seen = await readUntilDropped(
      stream,
      abort,
      (s) => s.filter((c) => c.type === 'start-step').length === 2 && s.at(-1)?.type === 'reasoning-delta',
    );
    assert.ok(seen.some((c) => c.type === 'tool-output-available'));
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    await gw.close();
    gw = await gateway();
    worker = spawnWorker();
    const resumed = await transport(slowScript(), gw.url).reconnectToStream({ chatId: chat });
    assert.ok(resumed, 'the turn is still active after the kill');
    const { chunks, message } = await readAll(ours(resumed));
    assert.ok(
      chunks.some((c) => c.type === 'reset-step'),
      'the retried round started its step over',
    );
    assert.deepEqual(shape(message), shape(control.message));
    const conv = (await fetch(`${gw.url}/v1/conversations/${chat}`, { headers: { 'x-api-key': KEY } })).status;
    assert.equal(conv, 200);
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
});
