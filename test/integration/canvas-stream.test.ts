/**
 * Canvases stream as they are written (issue 40 item 4), end to end through the gateway's SSE: a
 * native-tool-calling turn whose model (the Anthropic or OpenAI-compatible emulator behind the
 * official SDK) writes a react.write call and stops mid-way through its `content` until the test
 * has looked — the stream already carries the canvas `delta` events (and a JSON file's `attribute`
 * events) while the model's response is unfinished and no tool has run; after the turn the stored
 * file equals what was streamed, the canvases route folds the JSON widget, and a round retried
 * after a cut stream leaves one canvas with the stored text (the web chat's own fold, apps/web/live.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { emulatedProviders } from '../support/emulated-providers';
import {
  reply,
  startAnthropicEmulator,
  type AnthropicEmulator,
  type MessageReply,
} from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator, type OpenAIMessageReply } from '../emulator/openai-emulator';
import type { RunningGateway } from '../../apps/gateway/server';
import { openSse, type SseEvent } from '../../client/sse-client';
import { apply, emptyTurn, liveEvent, type LiveTurn } from '../../apps/web/live';
import { getArtifact } from '../../store/artifact-store';
import { canvasInstance } from '../../core/stream/write-canvas';
import type { TurnOptionsInput } from '../../core/turn/contracts';

const KEY = 'canvas-key';
let stack: TestStack;
let gw: RunningGateway;
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;

before(async () => {
  anthropic = await startAnthropicEmulator();
  openai = await startOpenAIEmulator();
  stack = await createTestStack('canvas_stream');
  await stack.startWorker({ provider: emulatedProviders({ anthropic, openai }) });
  // A warm-up native turn per provider: a cold worker's first decide attempt (SDK module loading on
  // a loaded machine) can outlive its 2 s heartbeat timeout, and its retry would take the next reply.
  anthropic.enqueue(reply.toolUse('conversation_title', { title: 'Warm-up' }), reply.text('warm'));
  openai.enqueue(oreply.text('warm'));
  for (const provider of ['anthropic', 'openai'] as const) {
    const warm = uniqueId('warm');
    await stack.client.startTurn(warm, 'warm up', { model: { provider, protocol: 'native' } } as TurnOptionsInput);
    await stack.client.result(warm, 1);
  }
  gw = await stack.startGateway({ allowScripted: false, apiKeys: [KEY], pollMs: 100 });
});
after(async () => {
  await stack?.teardown();
  await anthropic?.stop();
  await openai?.stop();
});

const headers = { 'content-type': 'application/json', 'x-api-key': KEY };

async function startTurn(conv: string, provider: 'anthropic' | 'openai'): Promise<void> {
  const res = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      prompt: 'Write the report as a canvas',
      options: { model: { provider, protocol: 'native' } },
    }),
  });
  assert.equal(res.status, 202, await res.clone().text());
}

/** Reads the conversation's SSE from `after` until `stop` says so; the messages read. */
async function readUntil(conv: string, stop: (all: SseEvent[]) => boolean, after = 0): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of await openSse(`${gw.url}/v1/conversations/${conv}/stream?after=${after}`, {
    headers: { 'x-api-key': KEY },
    signal: AbortSignal.timeout(60_000),
  })) {
    out.push(e);
    if (stop(out)) break;
  }
  return out;
}

const body = (e: SseEvent) => JSON.parse(e.data) as Record<string, unknown>;
/** The canvas deltas a round published while the model wrote (the tool's own carry its callId). */
const roundDeltas = (all: SseEvent[]) =>
  all.filter((e) => e.event === 'channel' && body(e).channel === 'canvas' && 'text' in body(e) && !body(e).callId);
const roundText = (all: SseEvent[]) =>
  roundDeltas(all)
    .map((e) => String(body(e).text))
    .join('');
const isDone = (e: SseEvent) => e.event === 'done';
const toolStarted = (all: SseEvent[]) => all.some((e) => e.event === 'step' && body(e).phase === 'iteration.start');

/** The web chat's live turn folded from the SSE messages (its own mapping and fold). */
function liveOf(conv: string, all: SseEvent[]): LiveTurn {
  let t = emptyTurn();
  for (const m of all) {
    const e = liveEvent(m, conv);
    if (e) t = apply(t, e);
  }
  return t;
}

/** A Markdown report long enough that the paused tail is inside its content. */
const REPORT = [
  '# Quarterly report',
  '',
  ...Array.from({ length: 12 }, (_, i) => `- item ${i + 1}: revenue "up" ${i * 3} %, costs \\ flat — ✓`),
  '',
  'The end of the report, with a tail the model is still writing when the test looks.',
].join('\n');

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function storedFile(conv: string, rel: string): Promise<string | undefined> {
  return (await getArtifact(stack.db.pool, conv, 'file', `turn_1/files/${rel}`))?.content;
}

test('canvases stream as they are written: a Markdown react.write reaches the SSE stream before the Anthropic round ends, and the stored file is what streamed', async () => {
  const conv = uniqueId('conv');
  const release = deferred();
  const paused: MessageReply = {
    kind: 'message',
    content: [
      { type: 'text', text: 'Writing the report.' },
      { type: 'tool_use', name: 'react_write', input: { path: 'report.md', channel: 'canvas', content: REPORT } },
    ],
    // All but the last 12 events: the content's tail, the block's stop, message_delta, message_stop.
    pauseAfterEvents: { after: -12, until: release.promise },
  };
  anthropic.enqueue(
    reply.toolUse('conversation_title', { title: 'Report' }),
    paused,
    reply.text('The report is on the canvas.'),
  );
  await startTurn(conv, 'anthropic');
  const early = await readUntil(conv, (all) => roundText(all).length >= 200);
  try {
    const shown = roundText(early);
    assert.ok(REPORT.startsWith(shown) && shown.length < REPORT.length, `a prefix streamed: ${shown.length} chars`);
    assert.ok(!toolStarted(early) && !early.some(isDone), 'no tool ran, the turn is not done');
    assert.equal(anthropic.requests.find((r) => r.reply === paused)?.completed, false, 'the model is still writing');
    assert.equal(body(roundDeltas(early)[0]!).index, 0);
    assert.equal(body(roundDeltas(early)[0]!).path, 'fi:turn_1.files/report.md');
  } finally {
    release.resolve();
  }
  const rest = await readUntil(conv, (all) => all.some(isDone), Number(early.at(-1)!.id));
  const all = [...early, ...rest];
  assert.equal(roundText(all), REPORT, 'the round streamed the whole content');
  assert.equal(await storedFile(conv, 'report.md'), REPORT, 'the stored file equals what streamed');
  const live = liveOf(conv, all);
  assert.deepEqual(
    live.canvases.map((c) => [c.key, c.text, c.done]),
    [['fi:turn_1.files/report.md', REPORT, true]],
  );
});

test('canvases stream as they are written: a JSON widget gets its first attribute before the OpenAI-compatible round ends; the canvases route folds it', async () => {
  const conv = uniqueId('conv');
  const widget = {
    title: 'Sales by region',
    total: 4211,
    regions: [
      { name: 'north', value: 1800 },
      { name: 'south', value: 2411 },
    ],
    summary: `South leads. ${'Details follow in the long summary the model is still writing. '.repeat(3)}`,
  };
  const content = JSON.stringify(widget, null, 2);
  const release = deferred();
  const paused: OpenAIMessageReply = {
    kind: 'message',
    content: [{ type: 'tool_call', name: 'react_write', args: { path: 'sales.json', channel: 'canvas', content } }],
    // All but the last 8 chunks: the summary's tail, the finish and usage chunks, [DONE].
    pauseAfterChunks: { after: -8, until: release.promise },
  };
  openai.enqueue(paused, oreply.text('The widget is on the canvas.'));
  await startTurn(conv, 'openai');
  const early = await readUntil(conv, (all) =>
    all.some((e) => e.event === 'channel' && body(e).attribute !== undefined),
  );
  try {
    const attrs = early.filter((e) => body(e).attribute !== undefined).map((e) => body(e).attribute);
    assert.deepEqual(attrs[0], { key: 'title', value: 'Sales by region' });
    const widgetNow = liveOf(conv, early).canvases;
    assert.equal(widgetNow.length, 1);
    assert.deepEqual(widgetNow[0]!.attributes?.[0], ['title', 'Sales by region'], 'the live widget shows it');
    assert.ok(!toolStarted(early) && !early.some(isDone), 'no tool ran, the turn is not done');
    assert.equal(openai.requests.find((r) => r.reply === paused)?.completed, false, 'the model is still writing');
  } finally {
    release.resolve();
  }
  const rest = await readUntil(conv, (all) => all.some(isDone), Number(early.at(-1)!.id));
  const all = [...early, ...rest];
  assert.equal(roundText(all), content);
  assert.equal(await storedFile(conv, 'sales.json'), content);
  const res = await fetch(`${gw.url}/v1/conversations/${conv}/canvases`, { headers });
  const { composites } = (await res.json()) as {
    composites: Array<{ turnId: string; instance: number; attributes: Array<[string, unknown]> }>;
  };
  assert.deepEqual(composites, [
    { turnId: 'turn_1', instance: canvasInstance('fi:turn_1.files/sales.json'), attributes: Object.entries(widget) },
  ]);
  const live = liveOf(conv, all);
  assert.deepEqual(
    live.canvases.map((c) => [c.key, c.kind, c.text]),
    [['fi:turn_1.files/sales.json', 'json', content]],
  );
});

test('a round retried after a cut stream starts its canvas over: one canvas, the stored text, no duplicate', async () => {
  const conv = uniqueId('conv');
  const first = REPORT.replace('Quarterly', 'Draft');
  anthropic.enqueue(
    reply.toolUse('conversation_title', { title: 'Report' }),
    {
      kind: 'message',
      content: [
        { type: 'tool_use', name: 'react_write', input: { path: 'report.md', channel: 'canvas', content: first } },
      ],
      cutAfterEvents: 60,
    },
    {
      kind: 'message',
      content: [
        { type: 'tool_use', name: 'react_write', input: { path: 'report.md', channel: 'canvas', content: REPORT } },
      ],
    },
    reply.text('Done.'),
  );
  await startTurn(conv, 'anthropic');
  const all = await readUntil(conv, (m) => m.some(isDone));
  assert.ok(
    all.some((e) => e.event === 'retry'),
    `the round was retried: ${all.map((e) => e.event).join(',')}`,
  );
  const starts = roundDeltas(all).filter((e) => body(e).index === 0);
  assert.equal(starts.length, 2, 'each attempt streamed the canvas from index 0');
  assert.equal(await storedFile(conv, 'report.md'), REPORT);
  const live = liveOf(conv, all);
  assert.deepEqual(
    live.canvases.map((c) => [c.key, c.text]),
    [['fi:turn_1.files/report.md', REPORT]],
  );
});
