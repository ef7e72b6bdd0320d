/** The structured-output chain against the emulator, each level forced by scripting earlier ones to fail. */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createAnthropicProvider } from '../../../activities/model/adapters/anthropic';
import { extractJson } from '../../../activities/model/json-extract';
import { REFORMAT_PROMPT, StructuredOutputError, structuredCall } from '../../../activities/model/structured';
import { ProviderError } from '../../../core/model/provider';
import {
  reply,
  startAnthropicEmulator,
  type AnthropicEmulator,
  type RecordedRequest,
} from '../../emulator/anthropic-emulator';

let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator();
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

const Plan = z.object({ steps: z.array(z.string()).min(1), done: z.boolean() });
const spec = { schema: Plan, name: 'plan', instructions: 'Plan the work.', input: 'Write a report on caching.' };
const provider = () => createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'k', model: 'claude-test' });
const good = { steps: ['read', 'write'], done: false };

const isL1 = (r: RecordedRequest) => (r.body.tool_choice as { type?: string } | undefined)?.type === 'tool';
const isL2 = (r: RecordedRequest) => r.body.output_config !== undefined;
const sumUsage = () =>
  emu.requests.reduce(
    (a, r) => ({
      inputTokens: a.inputTokens + r.usage!.input_tokens,
      outputTokens: a.outputTokens + r.usage!.output_tokens,
      cacheReadTokens: a.cacheReadTokens + r.usage!.cache_read_input_tokens,
      cacheWriteTokens: a.cacheWriteTokens + r.usage!.cache_creation_input_tokens,
    }),
    { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  );

test('level 1: native tool forcing with the zod-derived schema', async () => {
  emu.respond((r) => (isL1(r) ? reply.toolUse('plan', good) : reply.text('unexpected')));
  const res = await structuredCall(provider(), spec);
  assert.deepEqual(res.value, good);
  assert.equal(res.level, 1);
  assert.equal(emu.requests.length, 1);
  const body = emu.requests[0]!.body as {
    tools: Array<{ name: string; input_schema: Record<string, unknown> }>;
    tool_choice: unknown;
  };
  assert.deepEqual(body.tool_choice, { type: 'tool', name: 'plan' });
  assert.equal(body.tools[0]!.name, 'plan');
  assert.equal(body.tools[0]!.input_schema.type, 'object');
  assert.deepEqual(body.tools[0]!.input_schema.required, ['steps', 'done']);
  assert.equal(body.tools[0]!.input_schema.$schema, undefined);
  assert.deepEqual(res.usage, sumUsage());
});

test('level 2: tool input fails validation → JSON mode answer parses', async () => {
  emu.respond((r) =>
    isL1(r) ? reply.toolUse('plan', { steps: [] }) : isL2(r) ? reply.text(JSON.stringify(good)) : reply.text('no'),
  );
  const attempts: string[] = [];
  const res = await structuredCall(provider(), spec, {
    onAttempt: (a) => attempts.push(`${a.level}.${a.try}:${a.ok}`),
  });
  assert.deepEqual([res.value, res.level], [good, 2]);
  assert.deepEqual(attempts, ['1.1:false', '2.1:true']);
  assert.equal((emu.requests[1]!.body.output_config as { format: { type: string } }).format.type, 'json_schema');
  assert.deepEqual(res.usage, sumUsage());
});

test('level 2 reformat retry: invalid JSON, then the reformat prompt fixes it', async () => {
  emu.respond((r) => {
    if (isL1(r)) return reply.text('I refuse to call tools');
    const msgs = r.body.messages as unknown[];
    return msgs.length === 1
      ? reply.text('{"steps": ["a"], done: yes}')
      : reply.text(JSON.stringify({ steps: ['a'], done: true }));
  });
  const res = await structuredCall(provider(), spec);
  assert.deepEqual([res.value, res.level], [{ steps: ['a'], done: true }, 2]);
  assert.deepEqual(
    res.attempts.map((a) => `${a.level}.${a.try}`),
    ['1.1', '2.1', '2.2'],
  );
  const retry = emu.requests[2]!.body.messages as Array<{ role: string; content: Array<{ text: string }> }>;
  assert.equal(retry[1]!.role, 'assistant');
  assert.equal(retry[1]!.content[0]!.text, '{"steps": ["a"], done: yes}');
  assert.ok(retry[2]!.content[0]!.text.startsWith(REFORMAT_PROMPT));
});

test('level 3: plain text extraction after levels 1 and 2 fail (with its own retry)', async () => {
  const prose = `Sure! Here is the plan:\n\`\`\`json\n${JSON.stringify(good, null, 2)}\n\`\`\`\nHope that helps.`;
  let l3 = 0;
  emu.respond((r) => {
    if (isL1(r)) return reply.toolUse('plan', { wrong: 1 });
    if (isL2(r)) return reply.text('Here you go: not json at all');
    l3++;
    return l3 === 1 ? reply.text('Thinking… no JSON yet.') : reply.text(prose);
  });
  const res = await structuredCall(provider(), spec);
  assert.deepEqual([res.value, res.level], [good, 3]);
  assert.deepEqual(
    res.attempts.map((a) => `${a.level}.${a.try}:${a.ok}`),
    ['1.1:false', '2.1:false', '2.2:false', '3.1:false', '3.2:true'],
  );
  assert.equal(emu.requests.length, 5, 'worst case is 5 calls');
  assert.deepEqual(res.usage, sumUsage());
});

test('capabilities skip levels; total failure throws StructuredOutputError with every attempt', async () => {
  emu.respond(() => reply.text('nothing useful'));
  await assert.rejects(
    structuredCall(provider(), spec, { capabilities: { toolCall: false, jsonMode: false } }),
    (e: unknown) => {
      assert.ok(e instanceof StructuredOutputError);
      assert.deepEqual(
        e.attempts.map((a) => a.level),
        [3, 3],
      );
      assert.match(e.message, /structured call "plan" failed at every level: L3\.1: no JSON found/);
      return true;
    },
  );
  assert.equal(emu.requests.length, 2);
});

test('a 400 at level 1 falls through (capability unsupported); a 429 propagates for Temporal to retry', async () => {
  emu.enqueue(reply.error(400, 'invalid_request_error', 'tool_choice not supported'), reply.text(JSON.stringify(good)));
  const res = await structuredCall(provider(), spec);
  assert.equal(res.level, 2);
  emu.reset();
  emu.enqueue(reply.rateLimited(1));
  await assert.rejects(
    structuredCall(provider(), spec),
    (e: unknown) => e instanceof ProviderError && e.kind === 'rate_limit' && e.retryable,
  );
});

test('bad input is a clear error', async () => {
  await assert.rejects(structuredCall(provider(), { ...spec, name: 'bad name' }), /must match/);
  await assert.rejects(structuredCall(provider(), { ...spec, input: '' }), /input is empty/);
});

test('extractJson: whole text, fenced block, first balanced span with braces in strings, nothing', () => {
  assert.deepEqual(extractJson(' {"a":1} '), { value: { a: 1 } });
  assert.deepEqual(extractJson('x ```json\n[1,2]\n``` y'), { value: [1, 2] });
  assert.deepEqual(extractJson('Answer: {"s": "a } b", "n": {"m": [1]}} trailing }'), {
    value: { s: 'a } b', n: { m: [1] } },
  });
  assert.deepEqual(extractJson('{bad} then {"ok": true}'), { value: { ok: true } });
  assert.equal(extractJson('no json here'), undefined);
});
