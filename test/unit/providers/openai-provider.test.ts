/**
 * The OpenAI-compatible provider through the real `openai` SDK against the OpenAI emulator:
 * stream parts, tool-call deltas assembled across chunks, reasoning, cached tokens, classified
 * failures (429 + retry-after, 500, overload, cut stream, context length, auth), aborts, and the
 * structured calls with and without JSON Schema.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import OpenAI from 'openai';
import { createOpenAICompatibleProvider } from '../../../activities/providers/openai-compatible';
import { structuredCall } from '../../../activities/providers/structured';
import { abilitiesFor } from '../../../core/model/abilities';
import { collectStream, ProviderError, type ModelRequest, type StreamPart } from '../../../core/model/provider';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../../emulator/openai-emulator';

let emu: OpenAIEmulator;
before(async () => {
  emu = await startOpenAIEmulator({
    apiKey: 'sk-test',
    minCacheableTokens: 256,
    models: { 'local-': { jsonSchema: false }, 'plain-': { tools: false, jsonSchema: false } },
  });
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

const provider = (model = 'gpt-4o-mini', extra: Parameters<typeof createOpenAICompatibleProvider>[0] = {}) =>
  createOpenAICompatibleProvider({ baseURL: emu.baseURL, apiKey: 'sk-test', model, onWarning: () => {}, ...extra });

const request = (text = 'hello'): ModelRequest => ({
  system: [{ text: 'You are terse.' }],
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  maxTokens: 200,
});

async function parts(p: ReturnType<typeof provider>, req: ModelRequest, signal?: AbortSignal) {
  const out: StreamPart[] = [];
  for await (const part of p.stream(req, signal ? { signal } : {})) out.push(part);
  return out;
}

test('streams text with the request id, provider and model first, usage and one finish last', async () => {
  emu.enqueue(oreply.text('The answer is 42, as everyone knows.'));
  const out = await parts(provider(), request());
  assert.deepEqual(out[0], {
    type: 'response-metadata',
    provider: 'openai:gpt-4o-mini',
    model: 'gpt-4o-mini',
    requestId: 'req_oai_0',
  });
  const text = out.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
  assert.equal(text, 'The answer is 42, as everyone knows.');
  assert.ok(out.filter((p) => p.type === 'text-delta').length > 3, 'several deltas');
  const finish = out.at(-1)!;
  assert.equal(finish.type, 'finish');
  assert.equal(finish.type === 'finish' && finish.stopReason, 'end_turn');
  assert.equal(finish.type === 'finish' && finish.usage.inputTokens, emu.requests[0]!.accounting!.promptTokens);
  assert.equal(emu.requests[0]!.body.max_tokens, 200, 'a non-openai.com server gets max_tokens');
  assert.equal(emu.requests[0]!.headers.authorization, 'Bearer sk-test');
});

test('tool-call deltas split across chunks are assembled by index; parallel calls in order', async () => {
  emu.enqueue(
    oreply.toolCalls(
      [
        { name: 'react_write', args: { path: 'a.md', content: 'alpha '.repeat(20) }, id: 'call_a' },
        { name: 'react_read', args: { paths: ['x', 'y'] }, id: 'call_b' },
      ],
      { text: 'Writing and reading.' },
    ),
  );
  const res = await collectStream(
    provider().stream({
      ...request(),
      tools: [
        { name: 'react_write', description: 'w', inputSchema: {} },
        { name: 'react_read', description: 'r', inputSchema: {} },
      ],
    }),
  );
  assert.equal(res.text, 'Writing and reading.');
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.toolCalls, [
    { id: 'call_a', name: 'react_write', input: { path: 'a.md', content: 'alpha '.repeat(20) } },
    { id: 'call_b', name: 'react_read', input: { paths: ['x', 'y'] } },
  ]);
});

test('reasoning_content streams as reasoning deltas, apart from the answer; reasoning tokens in usage', async () => {
  emu.enqueue(oreply.reasoning('First I consider the question carefully.', oreply.text('Yes.')));
  const out = await parts(provider('deepseek-reasoner'), request());
  const reasoning = out.flatMap((p) => (p.type === 'reasoning-delta' ? [p.text] : [])).join('');
  assert.equal(reasoning, 'First I consider the question carefully.');
  assert.equal(out.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join(''), 'Yes.');
  const finish = out.at(-1)!;
  assert.ok(finish.type === 'finish' && (finish.usage.reasoningTokens ?? 0) > 0);
});

test('cached tokens: a second call over the same prefix reads it (cache reads), in 128-token steps', async () => {
  const long = 'context words '.repeat(300);
  const req = (q: string): ModelRequest => ({
    system: [{ text: long }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: long }] },
      { role: 'assistant', content: [{ type: 'text', text: 'noted' }] },
      { role: 'user', content: [{ type: 'text', text: q }] },
    ],
    maxTokens: 50,
  });
  const first = await collectStream(provider().stream(req('one')));
  const second = await collectStream(provider().stream(req('two')));
  assert.equal(first.usage.cacheReadTokens, 0);
  assert.ok(second.usage.cacheReadTokens > 0, 'the second call reads the cached prefix');
  assert.equal(second.usage.cacheReadTokens % 128, 0);
  assert.equal(second.usage.cacheReadTokens, emu.requests[1]!.accounting!.cachedTokens);
  assert.equal(
    second.usage.inputTokens + second.usage.cacheReadTokens,
    emu.requests[1]!.accounting!.promptTokens,
    'prompt tokens = uncached + cached',
  );
  assert.equal(second.usage.cacheWriteTokens, 0);
});

test('failures are classified: 429 with retry-after, 500, overload, context length, auth', async () => {
  const kindOf = async (p = provider()) => {
    try {
      await collectStream(p.stream(request()));
    } catch (err) {
      assert.ok(err instanceof ProviderError, String(err));
      return { kind: err.kind, retryable: err.retryable, retryAfterMs: err.retryAfterMs, message: err.message };
    }
    assert.fail('expected a failure');
  };
  emu.enqueue(oreply.rateLimited(12));
  assert.deepEqual((({ kind, retryable, retryAfterMs }) => ({ kind, retryable, retryAfterMs }))(await kindOf()), {
    kind: 'rate_limit',
    retryable: true,
    retryAfterMs: 12_000,
  });
  emu.enqueue(oreply.serverError());
  assert.equal((await kindOf()).kind, 'server');
  emu.enqueue(oreply.overloaded());
  assert.equal((await kindOf()).kind, 'overloaded');
  emu.setContextWindow(5);
  const ctx = await kindOf();
  emu.setContextWindow(undefined);
  assert.deepEqual([ctx.kind, ctx.retryable], ['context_length', false]);
  assert.match(ctx.message, /maximum context length is 5 tokens/);
  const auth = await kindOf(provider('gpt-4o-mini', { apiKey: 'wrong' }));
  assert.deepEqual([auth.kind, auth.retryable], ['auth', false]);
});

test('a stream cut mid-way is a retryable network error; an error payload in the stream is classified', async () => {
  emu.enqueue({ ...oreply.text('a fairly long answer that will not arrive whole'), cutAfterChunks: 5 });
  await assert.rejects(collectStream(provider().stream(request())), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.kind, 'network');
    assert.equal(err.retryable, true);
    return true;
  });
  emu.enqueue({
    ...oreply.text('partial answer text'),
    streamErrorAfterChunks: { after: 3, type: 'server_error', message: 'The engine is currently overloaded' },
  });
  await assert.rejects(collectStream(provider().stream(request())), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.kind, 'overloaded');
    return true;
  });
});

test('the abort signal reaches the SDK: a held stream ends with a non-retryable aborted error', async () => {
  emu.enqueue({ ...oreply.text('never ending story'), holdAfterChunks: 3 });
  const ac = new AbortController();
  const p = collectStream(provider().stream(request(), { signal: ac.signal }));
  while (emu.requests.length === 0 || emu.requests[0]!.firstChunkAt === undefined)
    await new Promise((r) => setTimeout(r, 5));
  ac.abort();
  await assert.rejects(p, (err: unknown) => err instanceof ProviderError && err.kind === 'aborted' && !err.retryable);
  await emu.requests[0]!.closed;
  assert.equal(emu.requests[0]!.clientClosed, true);
});

test('the SDK client carries organization, project and default headers; SDK retries are off', async () => {
  emu.enqueue(oreply.serverError());
  const p = provider('gpt-4o-mini', { organization: 'org-1', project: 'proj-1', defaultHeaders: { 'x-tenant': 't1' } });
  await assert.rejects(collectStream(p.stream(request())));
  assert.equal(emu.requests.length, 1, 'no SDK retry');
  const h = emu.requests[0]!.headers;
  assert.deepEqual([h['openai-organization'], h['openai-project'], h['x-tenant']], ['org-1', 'proj-1', 't1']);
  assert.ok(p.client instanceof OpenAI);
});

const Title = z.object({ title: z.string() });
const spec = { schema: Title, name: 'conversation_title', instructions: 'Title it.', input: 'Tell me about tides' };

test('structured call on a model with tools: level 1 (forced tool call)', async () => {
  emu.enqueue(oreply.toolCall('conversation_title', { title: 'Tides' }));
  const res = await structuredCall(provider('gpt-4o-mini'), spec);
  assert.deepEqual([res.value, res.level], [{ title: 'Tides' }, 1]);
  assert.deepEqual(emu.requests[0]!.body.tool_choice, { type: 'function', function: { name: 'conversation_title' } });
});

test('structured call on a model with JSON Schema but no tool calling: level 2 with response_format json_schema', async () => {
  emu.enqueue(oreply.text('{"title":"Tides"}'));
  const abilities = { ...abilitiesFor('openai', 'gpt-4o'), toolCalling: false };
  const res = await structuredCall(provider('gpt-4o', { abilities }), spec);
  assert.deepEqual([res.value, res.level], [{ title: 'Tides' }, 2]);
  const rf = emu.requests[0]!.body.response_format as { type: string; json_schema: { name: string; schema: unknown } };
  assert.equal(rf.type, 'json_schema');
  assert.equal(rf.json_schema.name, 'conversation_title');
  assert.equal(emu.requests[0]!.body.tools, undefined);
});

test('structured call on a model without JSON Schema: json_object mode, never json_schema (the server would refuse it)', async () => {
  emu.enqueue(oreply.text('{"title":"Tides"}'));
  const abilities = { ...abilitiesFor('openai', 'local-llama'), toolCalling: false };
  const res = await structuredCall(provider('local-llama', { abilities }), spec);
  assert.equal(res.level, 2);
  assert.deepEqual(emu.requests[0]!.body.response_format, { type: 'json_object' });
});

test('structured call on a plain-text model (no tools, no JSON mode): level 3, JSON found in prose', async () => {
  emu.enqueue(oreply.text('Sure! ```json\n{"title":"Tides"}\n```'));
  const abilities = {
    toolCalling: false,
    jsonSchema: false,
    jsonMode: false,
    caching: 'none' as const,
    thinking: 'none' as const,
  };
  const res = await structuredCall(provider('plain-model', { abilities }), spec);
  assert.deepEqual([res.value, res.level], [{ title: 'Tides' }, 3]);
  assert.equal(emu.requests.length, 1);
  assert.equal(emu.requests[0]!.body.response_format, undefined);
  assert.equal(emu.requests[0]!.body.tools, undefined);
});

test('structured call: the declared table picks the levels by model id (deepseek-reasoner: plain text only)', async () => {
  emu.enqueue(oreply.text('{"title":"Tides"}'));
  const res = await structuredCall(provider('deepseek-reasoner'), spec);
  assert.equal(res.level, 3);
});

test('tool-call argument deltas stream as tool-input-delta parts by index, before the call completes', async () => {
  const a = { path: 'a.md', channel: 'canvas', content: 'alpha '.repeat(20) };
  const b = { paths: ['x', 'y'] };
  emu.enqueue(
    oreply.toolCalls([
      { name: 'react_write', args: a, id: 'call_a' },
      { name: 'react_read', args: b, id: 'call_b' },
    ]),
  );
  const out = await parts(provider(), {
    ...request(),
    tools: [
      { name: 'react_write', description: 'w', inputSchema: {} },
      { name: 'react_read', description: 'r', inputSchema: {} },
    ],
  });
  const pieces = out.flatMap((p) => (p.type === 'tool-input-delta' ? [p] : []));
  const json = (index: number) =>
    pieces
      .filter((p) => p.index === index)
      .map((p) => p.json)
      .join('');
  assert.equal(json(0), JSON.stringify(a));
  assert.equal(json(1), JSON.stringify(b));
  assert.ok(pieces.filter((p) => p.index === 0).length > 3, 'in several pieces');
  assert.ok(
    pieces.every((p) => (p.index === 0 ? p.id === 'call_a' && p.name === 'react_write' : p.name === 'react_read')),
  );
  const firstCall = out.findIndex((p) => p.type === 'tool-call');
  assert.ok(
    out.findIndex((p) => p.type === 'tool-input-delta') < firstCall,
    'the pieces come before the finished call',
  );
});
