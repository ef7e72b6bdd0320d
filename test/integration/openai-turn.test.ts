/**
 * Whole turns on the OpenAI-compatible provider (the real `openai` SDK through the provider
 * registry, as a worker resolves `provider: openai`) against the local OpenAI API emulator, on
 * real Temporal and Postgres:
 * - the channel protocol over plain text: a multi-round turn with web_fetch, react.write and a
 *   cited answer; cached tokens reach the ledger as cache reads, rows name the model;
 * - native tool calling: parallel tool calls answered with tool messages (the emulator checks the
 *   pairing as the API does), reasoning_content on the thinking channel;
 * - a steer during a held stream: the finalize round answers;
 * - the model's context-limit 400 forces one compaction, and the round then succeeds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import {
  oreply,
  startOpenAIEmulator,
  type OpenAIEmulator,
  type OpenAIRecordedRequest,
} from '../emulator/openai-emulator';
import { defaultProviderResolver } from '../../activities/model/registry';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { loadSourcesPool } from '../../store/sources-store';
import type { TurnOptionsInput } from '../../core/turn/contracts';

// web_fetch refuses non-public addresses unless told otherwise; the page below is on 127.0.0.1.
process.env.DREACT_WEB_ALLOW_PRIVATE = '1';

const MODEL = 'gpt-4o-mini';
let stack: TestStack;
let emu: OpenAIEmulator;
let pages: Server;
let base = '';
before(async () => {
  pages = createServer((req, res) => {
    if (req.url !== '/tides') return void res.writeHead(404).end('not found');
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<html><head><title>Tides</title></head><body><main><p>The moon drives the tides.</p></main></body></html>');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  emu = await startOpenAIEmulator({ minCacheableTokens: 64, chunkDelayMs: 1, apiKey: 'sk-emu' });
  stack = await createTestStack('openai_turn');
  await stack.startWorker({
    provider: defaultProviderResolver(
      { OPENAI_BASE_URL: emu.baseURL, OPENAI_API_KEY: 'sk-emu', DREACT_OPENAI_MODEL: MODEL },
      { provider: 'scripted' },
    ),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
  await new Promise((r) => pages.close(r));
});

const title = oreply.toolCall('conversation_title', { title: 'Tides' });
const openai = (extra: Record<string, unknown> = {}) =>
  ({ model: { provider: 'openai', ...extra } }) as unknown as TurnOptionsInput;
const isTitle = (q: OpenAIRecordedRequest) =>
  (q.body.tool_choice as { function?: { name?: string } } | undefined)?.function?.name === 'conversation_title';
const decisions = () => emu.requests.filter((q) => !isTitle(q) && !q.summarizer);

test('channel protocol: web_fetch, write, a cited answer; cached tokens in the ledger as cache reads', async () => {
  emu.reset();
  emu.enqueue(
    title,
    oreply.text(callTool('web_fetch', { urls: [`${base}/tides`] })),
    oreply.text(
      callTool('react.write', { path: 'tides.md', channel: 'internal', content: 'moon '.repeat(100), kind: 'file' }),
    ),
    oreply.text(complete('The moon drives the tides [[S:1]].')),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'what drives the tides?', openai());
  const r = await stack.client.result(conv, 1);
  assert.match(r.answer, /The moon drives the tides/);
  assert.equal(r.rounds, 3);
  assert.equal(decisions().length, 3);
  for (const q of decisions()) {
    assert.equal(q.body.model, MODEL);
    assert.equal(q.body.tools, undefined, 'the channel protocol needs no tool calling');
    assert.equal((q.body.messages as Array<{ role: string }>)[0]!.role, 'system');
  }
  assert.match(r.answer, /\[\[S:1\]\]/, 'the answer cites the fetched page');
  const pool = await loadSourcesPool(stack.db.pool, conv);
  assert.deepEqual(
    pool.map((row) => [row.sid, row.url]),
    [[1, `${base}/tides`]],
  );
  const cached = decisions().reduce((n, q) => n + q.accounting!.cachedTokens, 0);
  assert.ok(cached > 0, 'later rounds read the cached prefix');
  const ledger = await stack.db.pool.query(
    `SELECT provider, model, purpose, input_tokens, cache_read_tokens, cache_write_tokens, cost_usd
       FROM usage_ledger WHERE conversation_id = $1`,
    [conv],
  );
  assert.equal(ledger.rows.length, 4, 'title + 3 rounds');
  for (const row of ledger.rows) {
    assert.deepEqual([row.provider, row.model], [`openai:${MODEL}`, MODEL]);
    assert.equal(row.cache_write_tokens, 0);
    assert.ok(Number(row.cost_usd) > 0, 'priced by provider');
  }
  const sum = (k: string) => ledger.rows.reduce((n, row) => n + Number(row[k]), 0);
  assert.equal(
    sum('cache_read_tokens'),
    emu.requests.reduce((n, q) => n + q.accounting!.cachedTokens, 0),
  );
  assert.equal(
    sum('input_tokens') + sum('cache_read_tokens'),
    emu.requests.reduce((n, q) => n + q.accounting!.promptTokens, 0),
  );
  assert.equal(r.usage.cacheReadTokens, cached, 'the turn result counts the cache reads');
});

test('native tool calling: parallel calls answered by tool messages, reasoning on the thinking channel', async () => {
  emu.reset();
  emu.enqueue(
    title,
    oreply.reasoning(
      'Two notes, two calls.',
      oreply.toolCalls(
        [
          { name: 'react_write', args: { path: 'files/a.md', channel: 'internal', content: 'alpha' }, id: 'call_a' },
          { name: 'react_write', args: { path: 'files/b.md', channel: 'internal', content: 'beta' }, id: 'call_b' },
        ],
        { text: 'Writing both notes.' },
      ),
    ),
    oreply.text('Both notes are written.'),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Write notes a and b', openai({ protocol: 'native' }));
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Both notes are written.');
  assert.equal(r.rounds, 2);
  const last = decisions().at(-1)!.body.messages as Array<Record<string, unknown>>;
  const a = last.findIndex((m) => m.role === 'assistant' && Array.isArray(m.tool_calls));
  assert.deepEqual(
    (last[a]!.tool_calls as Array<{ id: string; function: { name: string } }>).map((c) => [c.id, c.function.name]),
    [
      ['call_a', 'react_write'],
      ['call_b', 'react_write'],
    ],
  );
  assert.deepEqual(
    last.slice(a + 1, a + 3).map((m) => [m.role, m.tool_call_id]),
    [
      ['tool', 'call_a'],
      ['tool', 'call_b'],
    ],
  );
  assert.ok(Array.isArray(decisions()[0]!.body.tools), 'native rounds send the tools');
  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  const thought = events
    .filter((e) => e.kind === 'delta' && e.channel === 'thinking')
    .map((e) => String(e.payload?.text))
    .join('');
  assert.match(thought, /Two notes, two calls\./);
  const blocks = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result');
  assert.equal(blocks.length, 2);
});

test('a steer during the model call cancels the held stream and the finalize round answers', async () => {
  emu.reset();
  emu.enqueue(
    title,
    { ...oreply.text('<channel:thinking>a long thought that never ends'), holdAfterChunks: 4 },
    oreply.text(complete('Stopped, as you asked.')),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write an essay', openai());
  await waitFor('the model call to stream', async () => decisions().some((q) => q.firstChunkAt !== undefined));
  await stack.client.steer(conv, 'stop now');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'steer_finalize');
  assert.equal(r.answer, 'Stopped, as you asked.');
  // The cancellation reaches the activity with its next heartbeat, so the turn may finish first.
  await waitFor('the held stream to be aborted', async () => decisions()[0]!.clientClosed === true, 10_000);
  assert.match(JSON.stringify(decisions().at(-1)!.body.messages), /STEER DURING TURN/);
});

const iteration = (q: OpenAIRecordedRequest) =>
  Number(/Iteration (\d+)\//.exec(JSON.stringify((q.body.messages as unknown[]).at(-1)))?.[1] ?? 1);

test('the model context-limit 400 (context_length_exceeded) forces one compaction, and the round then succeeds', async () => {
  emu.reset();
  emu.respond((q) => {
    if (isTitle(q)) return oreply.toolCall('conversation_title', { title: 'Compaction' });
    return iteration(q) === 1
      ? oreply.text(
          callTool('react.write', {
            path: `notes/${q.index}.md`,
            channel: 'internal',
            content: `note ${q.index} `.repeat(150),
            kind: 'file',
          }),
        )
      : oreply.text(complete(`done ${q.index}`));
  });
  const conv = uniqueId('conv');
  for (let t = 1; t <= 5; t++) {
    await stack.client.startTurn(conv, `warm-up turn ${t}`, openai());
    await stack.client.result(conv, t);
  }
  const before = emu.requests.length;
  const window = Math.max(...emu.requests.slice(-2).map((q) => q.promptTokens)) - 300;
  emu.setContextWindow(window);
  try {
    await stack.client.startTurn(conv, 'the turn that hits the limit', openai());
    const r = await stack.client.result(conv, 6);
    assert.match(r.answer, /^done /);
    assert.equal(r.compactions, 1, 'one forced compaction');
    const refused = emu.requests.slice(before).filter((q) => q.status === 400);
    assert.equal(refused.length, 1, 'one refusal');
    assert.ok(
      emu.requests.slice(before).some((q) => q.summarizer),
      'the summary was written by the OpenAI model',
    );
  } finally {
    emu.setContextWindow(undefined);
  }
});
