/** The Anthropic adapter against the local emulator, through the real @anthropic-ai/sdk. */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectStream, ProviderError, type ModelRequest, type StreamPart } from '../../../core/model/provider';
import {
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_MODEL,
  type ProviderWarning,
} from '../../../activities/providers/anthropic';
import { EMPTY_LEDGER, recordRound, roundTotals, turnTotals } from '../../../core/model/pricing';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../../emulator/anthropic-emulator';

let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ apiKey: 'test-key' });
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

const provider = (extra: Parameters<typeof createAnthropicProvider>[0] = {}) =>
  createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test-key', model: 'claude-test', ...extra });

const LONG = 'lorem ipsum dolor sit amet '.repeat(200); // ~1350 tokens
const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: [{ text: LONG, cache: true }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
  maxTokens: 256,
  ...over,
});

async function parts(it: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of it) out.push(p);
  return out;
}

async function failure(it: AsyncIterable<StreamPart>): Promise<ProviderError> {
  try {
    await parts(it);
  } catch (e) {
    assert.ok(e instanceof ProviderError, `expected ProviderError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the stream to fail');
}

test('streams text deltas, usage parts and exactly one finish; sends model/max_tokens/temperature', async () => {
  emu.enqueue(reply.text('The quick brown fox jumps over the lazy dog, twice over.'));
  const ps = await parts(provider({ temperature: 0.2 }).stream(request()));
  const deltas = ps.filter((p) => p.type === 'text-delta');
  assert.ok(deltas.length > 3, 'several deltas');
  assert.equal(
    deltas.map((p) => (p.type === 'text-delta' ? p.text : '')).join(''),
    'The quick brown fox jumps over the lazy dog, twice over.',
  );
  assert.equal(ps.filter((p) => p.type === 'finish').length, 1);
  assert.equal(ps.at(-1)!.type, 'finish');
  assert.ok(ps.some((p) => p.type === 'usage'));
  const body = emu.requests[0]!.body;
  assert.equal(body.model, 'claude-test');
  assert.equal(body.max_tokens, 256);
  assert.equal(body.temperature, 0.2);
  assert.equal(body.stream, true);
  assert.equal(emu.requests[0]!.headers['x-stainless-retry-count'] ?? '0', '0');
});

test('final usage equals the emulator accounting (write, then read)', async () => {
  const p = provider();
  for (let i = 0; i < 2; i++) {
    const out = await collectStream(p.stream(request()));
    const wire = emu.requests[i]!.usage!;
    assert.deepEqual(out.usage, {
      inputTokens: wire.input_tokens,
      outputTokens: wire.output_tokens,
      cacheWriteTokens: wire.cache_creation_input_tokens,
      cacheReadTokens: wire.cache_read_input_tokens,
    });
    assert.equal(out.stopReason, 'end_turn');
  }
  assert.ok(emu.requests[0]!.usage!.cache_creation_input_tokens > 1024);
  assert.equal(emu.requests[1]!.usage!.cache_read_input_tokens, emu.requests[0]!.usage!.cache_creation_input_tokens);
});

test('a growing 4-round conversation: ledger per-round and turn totals equal the emulator accounting', async () => {
  const p = provider();
  let ledger = EMPTY_LEDGER;
  const messages: ModelRequest['messages'] = [
    { role: 'user', content: [{ type: 'text', text: 'question '.repeat(50) }] },
  ];
  for (let round = 1; round <= 4; round++) {
    emu.enqueue(reply.toolUse('search', { round }, { id: `toolu_${round}` }));
    const content = messages.map((m) => ({ ...m, content: m.content.map((c) => ({ ...c })) }));
    content.at(-1)!.content.at(-1)!.cache = true; // tail breakpoint
    const out = await collectStream(p.stream(request({ messages: content })));
    ledger = recordRound(ledger, { turnId: 't1', round, model: 'claude-sonnet-4-5', usage: out.usage });
    const wire = emu.requests[round - 1]!.usage!;
    assert.deepEqual(roundTotals(ledger, 't1', round).usage, {
      inputTokens: wire.input_tokens,
      outputTokens: wire.output_tokens,
      cacheReadTokens: wire.cache_read_input_tokens,
      cacheWriteTokens: wire.cache_creation_input_tokens,
    });
    messages.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${round}`, name: 'search', input: { round } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: `toolu_${round}`, content: `result ${round} `.repeat(200) }],
      },
    );
  }
  const sum = emu.requests.reduce(
    (a, r) => ({ read: a.read + r.accounting!.cacheReadTokens, prompt: a.prompt + r.accounting!.totalPromptTokens }),
    { read: 0, prompt: 0 },
  );
  const t = turnTotals(ledger, 't1');
  assert.equal(t.usage.cacheReadTokens, sum.read);
  assert.equal(t.usage.inputTokens + t.usage.cacheReadTokens + t.usage.cacheWriteTokens, sum.prompt);
  assert.equal(t.cacheReadRatio, sum.read / sum.prompt);
  assert.ok(t.cacheReadRatio > 0.5, `rounds 2-4 read the earlier prefix (${t.cacheReadRatio})`);
  assert.ok(t.cost < t.costWithoutCache);
});

test('cache flags become cache_control on exactly those blocks; no flag, no breakpoint', async () => {
  await collectStream(
    provider().stream(
      request({
        system: [{ text: 'a', cache: true }, { text: 'b' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'q1' },
              { type: 'text', text: 'q2', cache: true },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'r1' }] },
          { role: 'user', content: [{ type: 'text', text: 'q3', cache: true }] },
        ],
      }),
    ),
  );
  const b = emu.requests[0]!.body as {
    system: Array<Record<string, unknown>>;
    messages: Array<{ content: Array<Record<string, unknown>> }>;
  };
  assert.deepEqual(b.system[0]!.cache_control, { type: 'ephemeral' });
  assert.equal(b.system[1]!.cache_control, undefined);
  assert.equal(b.messages[0]!.content[0]!.cache_control, undefined);
  assert.deepEqual(b.messages[0]!.content[1]!.cache_control, { type: 'ephemeral' });
  assert.equal(b.messages[1]!.content[0]!.cache_control, undefined);
  assert.deepEqual(b.messages[2]!.content[0]!.cache_control, { type: 'ephemeral' });
  assert.equal(emu.requests[0]!.accounting!.breakpoints, 3);
});

test('more than 4 requested breakpoints: the last 4 are kept, the drop is reported, the API accepts it', async () => {
  const warnings: ProviderWarning[] = [];
  const msgs: ModelRequest['messages'] = Array.from({ length: 5 }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: [{ type: 'text' as const, text: `m${i}`, cache: true }],
  }));
  const out = await collectStream(provider({ onWarning: (w) => warnings.push(w) }).stream(request({ messages: msgs })));
  assert.equal(out.stopReason, 'end_turn');
  const b = emu.requests[0]!.body as {
    system: Array<Record<string, unknown>>;
    messages: Array<{ content: Array<Record<string, unknown>> }>;
  };
  assert.equal(b.system[0]!.cache_control, undefined, 'system breakpoint (earliest) dropped');
  assert.equal(b.messages[0]!.content[0]!.cache_control, undefined, 'first message breakpoint dropped');
  for (let i = 1; i < 5; i++) assert.deepEqual(b.messages[i]!.content[0]!.cache_control, { type: 'ephemeral' });
  assert.equal(emu.requests[0]!.accounting!.breakpoints, 4);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.code, 'cache_breakpoints_dropped');
  assert.deepEqual([warnings[0]!.requested, warnings[0]!.kept], [6, 4]);
});

test('tool use round trip: tools/toolChoice out, tool-call parsed from input_json_delta, tool_result back', async () => {
  emu.enqueue(
    reply.toolUse(
      'web_search',
      { query: 'temporal durable execution', limit: 5, filters: { lang: ['en', 'de'] } },
      { id: 'toolu_1', text: 'Let me search.' },
    ),
  );
  const tools = [
    {
      name: 'web_search',
      description: 'Search the web',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ];
  const p = provider();
  const first = await collectStream(p.stream(request({ tools, toolChoice: { type: 'auto' } })));
  assert.equal(first.stopReason, 'tool_use');
  assert.equal(first.text, 'Let me search.');
  assert.deepEqual(first.toolCalls, [
    {
      id: 'toolu_1',
      name: 'web_search',
      input: { query: 'temporal durable execution', limit: 5, filters: { lang: ['en', 'de'] } },
    },
  ]);
  const sent = emu.requests[0]!.body as { tools: Array<Record<string, unknown>>; tool_choice: unknown };
  assert.deepEqual(sent.tools[0], {
    name: 'web_search',
    description: 'Search the web',
    input_schema: tools[0]!.inputSchema,
  });
  assert.deepEqual(sent.tool_choice, { type: 'auto' });

  emu.enqueue(reply.text('Found it.'));
  const second = await collectStream(
    p.stream(
      request({
        tools,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'search please' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Let me search.' },
              { type: 'tool_use', id: 'toolu_1', name: 'web_search', input: first.toolCalls[0]!.input },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', toolUseId: 'toolu_1', content: 'result text', isError: true, cache: true },
            ],
          },
        ],
      }),
    ),
  );
  assert.equal(second.text, 'Found it.');
  const msgs = (emu.requests[1]!.body as { messages: Array<{ content: unknown[] }> }).messages;
  assert.deepEqual(msgs[1]!.content[1], {
    type: 'tool_use',
    id: 'toolu_1',
    name: 'web_search',
    input: first.toolCalls[0]!.input,
  });
  assert.deepEqual(msgs[2]!.content[0], {
    type: 'tool_result',
    tool_use_id: 'toolu_1',
    content: 'result text',
    is_error: true,
    cache_control: { type: 'ephemeral' },
  });
});

test('a tool_use cut by max_tokens is dropped (finish says max_tokens); bad JSON otherwise is a protocol error', async () => {
  const cut = {
    type: 'tool_use' as const,
    name: 'write',
    input: {},
    rawJson: '{"path": "a.md", "content": "Once upon a ti',
  };
  emu.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Writing.' }, cut], stopReason: 'max_tokens' });
  const out = await collectStream(provider().stream(request()));
  assert.deepEqual([out.stopReason, out.text, out.toolCalls.length], ['max_tokens', 'Writing.', 0]);
  emu.enqueue({ kind: 'message', content: [cut], stopReason: 'tool_use' });
  const e = await failure(provider().stream(request()));
  assert.deepEqual([e.kind, e.retryable], ['protocol', false]);
  assert.match(e.message, /tool_use "write" input is not valid JSON/);
});

test('toolChoice tool is passed through; naming an unknown tool is a clear error', async () => {
  const tools = [{ name: 'plan', description: 'd', inputSchema: { type: 'object' } }];
  emu.enqueue(reply.toolUse('plan', { steps: [] }));
  await collectStream(provider().stream(request({ tools, toolChoice: { type: 'tool', name: 'plan' } })));
  assert.deepEqual((emu.requests[0]!.body as { tool_choice: unknown }).tool_choice, { type: 'tool', name: 'plan' });
  await assert.rejects(
    collectStream(provider().stream(request({ tools, toolChoice: { type: 'tool', name: 'nope' } }))),
    /toolChoice names tool "nope"/,
  );
});

test('429 is retryable with retry-after-ms / retry-after honoured', async () => {
  emu.enqueue(reply.rateLimited(3, 1250), reply.rateLimited(2));
  const e1 = await failure(provider().stream(request()));
  assert.deepEqual([e1.kind, e1.retryable, e1.status, e1.retryAfterMs], ['rate_limit', true, 429, 1250]);
  const e2 = await failure(provider().stream(request()));
  assert.equal(e2.retryAfterMs, 2000);
  assert.equal(emu.requests.length, 2, 'the SDK did not retry (maxRetries: 0)');
});

test('529 overloaded and 500 are retryable', async () => {
  emu.enqueue(reply.overloaded(), { ...reply.serverError(), headers: { 'retry-after': '1' } });
  const e1 = await failure(provider().stream(request()));
  assert.deepEqual([e1.kind, e1.retryable, e1.status], ['overloaded', true, 529]);
  assert.match(e1.message, /overloaded_error/);
  const e2 = await failure(provider().stream(request()));
  assert.deepEqual([e2.kind, e2.retryable, e2.status, e2.retryAfterMs], ['server', true, 500, 1000]);
  assert.equal(emu.requests.length, 2);
});

test('400 and 401 are non-retryable with a clear message', async () => {
  emu.enqueue(reply.error(400, 'invalid_request_error', 'messages.0.content: text must not be empty'));
  const e = await failure(provider().stream(request()));
  assert.deepEqual([e.kind, e.retryable, e.status], ['bad_request', false, 400]);
  assert.match(e.message, /HTTP 400 invalid_request_error: messages\.0\.content: text must not be empty/);
  assert.match(e.message, /request-id req_emu_0/);
  const auth = await failure(provider({ apiKey: 'wrong' }).stream(request()));
  assert.deepEqual([auth.kind, auth.retryable, auth.status], ['auth', false, 401]);
  assert.match(auth.message, /ANTHROPIC_API_KEY/);
});

test('an overloaded SSE error event mid-stream is retryable; a stream cut mid-way is a retryable network error', async () => {
  emu.enqueue({
    ...reply.text('partial answer here'),
    streamErrorAfterEvents: { after: 4, type: 'overloaded_error', message: 'Overloaded' },
  });
  const e1 = await failure(provider().stream(request()));
  assert.deepEqual([e1.kind, e1.retryable], ['overloaded', true]);
  emu.enqueue({ ...reply.text('a much longer answer that will be cut '.repeat(5)), cutAfterEvents: 6 });
  const e2 = await failure(provider().stream(request()));
  assert.deepEqual([e2.kind, e2.retryable], ['network', true]);
  assert.ok(emu.requests[1]!.serverCut);
});

test('abort via signal closes the HTTP stream and throws a non-retryable aborted ProviderError', async () => {
  emu.enqueue({ ...reply.text('never finishes '.repeat(20)), holdAfterEvents: 6 });
  const ac = new AbortController();
  const seen: StreamPart[] = [];
  const err = await failure(
    (async function* () {
      for await (const p of provider().stream(request(), { signal: ac.signal })) {
        seen.push(p);
        if (p.type === 'text-delta') ac.abort();
        yield p;
      }
    })(),
  );
  assert.deepEqual([err.kind, err.retryable], ['aborted', false]);
  await emu.requests[0]!.closed;
  assert.equal(emu.requests[0]!.clientClosed, true, 'emulator saw the connection close');
  assert.equal(seen.filter((p) => p.type === 'finish').length, 0, 'no finish after an abort');
  assert.ok(seen.some((p) => p.type === 'text-delta'));
});

test('abort while waiting for the response headers also closes the connection', async () => {
  const ac = new AbortController();
  emu.enqueue(async (req) => {
    ac.abort(); // the request has arrived; no response headers yet
    await req.closed;
    return reply.text('late');
  });
  const err = await failure(provider().stream(request(), { signal: ac.signal }));
  assert.equal(err.kind, 'aborted');
  await emu.requests[0]!.closed;
  assert.equal(emu.requests[0]!.clientClosed, true);
});

test('an already-aborted signal sends nothing; breaking out of the loop also closes the stream', async () => {
  const ac = new AbortController();
  ac.abort();
  const e = await failure(provider().stream(request(), { signal: ac.signal }));
  assert.equal(e.kind, 'aborted');
  assert.equal(emu.requests.length, 0);
  emu.enqueue({ ...reply.text('held '.repeat(30)), holdAfterEvents: 6 });
  for await (const p of provider().stream(request())) if (p.type === 'text-delta') break;
  await emu.requests[0]!.closed;
  assert.equal(emu.requests[0]!.clientClosed, true);
});

test('model from option, env DREACT_MODEL, else the default; ANTHROPIC_BASE_URL honoured', async () => {
  const saved = { model: process.env.DREACT_MODEL, base: process.env.ANTHROPIC_BASE_URL };
  try {
    process.env.DREACT_MODEL = 'claude-env-model';
    process.env.ANTHROPIC_BASE_URL = emu.baseURL;
    const fromEnv = createAnthropicProvider({ apiKey: 'test-key' });
    assert.equal(fromEnv.model, 'claude-env-model');
    await collectStream(fromEnv.stream(request()));
    assert.equal(emu.requests[0]!.body.model, 'claude-env-model');
    await collectStream(fromEnv.stream(request({ model: 'claude-per-request' })));
    assert.equal(emu.requests[1]!.body.model, 'claude-per-request');
    delete process.env.DREACT_MODEL;
    assert.equal(createAnthropicProvider({ apiKey: 'x' }).model, DEFAULT_ANTHROPIC_MODEL);
  } finally {
    if (saved.model === undefined) delete process.env.DREACT_MODEL;
    else process.env.DREACT_MODEL = saved.model;
    if (saved.base === undefined) delete process.env.ANTHROPIC_BASE_URL;
    else process.env.ANTHROPIC_BASE_URL = saved.base;
  }
});

test('responseFormat with a schema becomes output_config.format', async () => {
  await collectStream(
    provider().stream(request({ responseFormat: { type: 'json', schema: { type: 'object', properties: {} } } })),
  );
  assert.deepEqual((emu.requests[0]!.body as { output_config: unknown }).output_config, {
    format: { type: 'json_schema', schema: { type: 'object', properties: {} } },
  });
});

test('input_json_delta streams as tool-input-delta parts of its block before the finished tool-call', async () => {
  const input = { path: 'report.md', channel: 'canvas', content: 'line\n'.repeat(30) };
  emu.enqueue(reply.toolUse('react_write', input, { id: 'toolu_w', text: 'Writing.' }));
  const out: StreamPart[] = [];
  for await (const part of provider().stream(
    request({ tools: [{ name: 'react_write', description: 'w', inputSchema: { type: 'object' } }] }),
  ))
    out.push(part);
  const pieces = out.flatMap((p) => (p.type === 'tool-input-delta' ? [p] : []));
  assert.ok(pieces.length > 3, `several pieces (${pieces.length})`);
  assert.equal(pieces.map((p) => p.json).join(''), JSON.stringify(input));
  assert.ok(pieces.every((p) => p.id === 'toolu_w' && p.name === 'react_write' && p.index === 1));
  assert.ok(
    out.findIndex((p) => p.type === 'tool-input-delta') < out.findIndex((p) => p.type === 'tool-call'),
    'the pieces come before the finished call',
  );
});
