/**
 * Anthropic extended thinking: the request mapping (budget, max_tokens, no temperature, no thinking
 * on forced tools, thinking blocks first), thinking streamed through the real SDK from the
 * emulator (reasoning deltas, the signed block, thinking tokens), the emulator's check that the
 * signed block comes back, and the native render placing a call's reasoning first.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { toAnthropicParams } from '../../../activities/providers/anthropic-request';
import { createAnthropicProvider } from '../../../activities/providers/anthropic';
import { collectStream, type ModelRequest, type StreamPart } from '../../../core/model/provider';
import { layoutNative, PROVIDER_REASONING, PROVIDER_TOOL_USE_ID } from '../../../core/model/native-render';
import { NativeToolNames } from '../../../core/model/native-tool-names';
import { makeBlock } from '../../../core/timeline/block';
import { blockText, type VisibleItem } from '../../../core/timeline/render';
import { reply, signThinking, startAnthropicEmulator, type AnthropicEmulator } from '../../emulator/anthropic-emulator';

const base: ModelRequest = {
  system: [{ text: 's' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
  maxTokens: 1000,
  temperature: 0.3,
};

test('mapping: thinking budget, max_tokens grown past it, temperature dropped; off for forced tools and when disabled', () => {
  const on = toAnthropicParams({ ...base, thinking: { budgetTokens: 2048 } }, { model: 'm' }).params;
  assert.deepEqual(on.thinking, { type: 'enabled', budget_tokens: 2048 });
  assert.equal(on.max_tokens, 3048);
  assert.equal(on.temperature, undefined);
  const byDefault = toAnthropicParams(
    { ...base, maxTokens: 8000 },
    { model: 'm', thinking: { budgetTokens: 1024 } },
  ).params;
  assert.deepEqual([byDefault.thinking, byDefault.max_tokens], [{ type: 'enabled', budget_tokens: 1024 }, 8000]);
  const forced = toAnthropicParams(
    { ...base, tools: [{ name: 't', description: 'd', inputSchema: {} }], toolChoice: { type: 'tool', name: 't' } },
    { model: 'm', thinking: { budgetTokens: 1024 } },
  ).params;
  assert.equal(forced.thinking, undefined);
  assert.equal(forced.temperature, 0.3);
  assert.equal(
    toAnthropicParams({ ...base, thinking: { disabled: true } }, { model: 'm', thinking: { budgetTokens: 1024 } })
      .params.thinking,
    undefined,
  );
  assert.throws(() => toAnthropicParams({ ...base, thinking: { budgetTokens: 100 } }, { model: 'm' }), /at least 1024/);
});

test('mapping: thinking parts go back first in their assistant message with their signature, only when thinking is on', () => {
  const messages: ModelRequest['messages'] = [
    ...base.messages,
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 't', input: {} },
        { type: 'thinking', text: 'hmm', signature: 'sig' },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'r' }] },
  ];
  const on = toAnthropicParams({ ...base, messages, thinking: { budgetTokens: 1024 } }, { model: 'm' }).params;
  assert.deepEqual(
    (on.messages[1]!.content as Array<{ type: string }>).map((b) => b.type),
    ['thinking', 'text', 'tool_use'],
  );
  assert.deepEqual((on.messages[1]!.content as unknown[])[0], { type: 'thinking', thinking: 'hmm', signature: 'sig' });
  const off = toAnthropicParams({ ...base, messages }, { model: 'm' }).params;
  assert.deepEqual(
    (off.messages[1]!.content as Array<{ type: string }>).map((b) => b.type),
    ['text', 'tool_use'],
  );
});

let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator();
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

test('stream: thinking deltas as reasoning deltas, the finished block with its signature, thinking tokens in usage', async () => {
  emu.enqueue(reply.thinking('Let me think about tides and the moon.', reply.text('The moon.')));
  const p = createAnthropicProvider({
    baseURL: emu.baseURL,
    apiKey: 'k',
    model: 'claude-test',
    thinking: { budgetTokens: 1024 },
  });
  const parts: StreamPart[] = [];
  for await (const part of p.stream({ ...base, temperature: undefined })) parts.push(part);
  const deltas = parts.flatMap((x) => (x.type === 'reasoning-delta' ? [x.text] : [])).join('');
  assert.equal(deltas, 'Let me think about tides and the moon.');
  const block = parts.find((x) => x.type === 'reasoning');
  assert.deepEqual(block, {
    type: 'reasoning',
    text: 'Let me think about tides and the moon.',
    signature: signThinking('Let me think about tides and the moon.'),
  });
  assert.equal(parts.flatMap((x) => (x.type === 'text-delta' ? [x.text] : [])).join(''), 'The moon.');
  const finish = parts.at(-1)!;
  assert.ok(finish.type === 'finish' && (finish.usage.reasoningTokens ?? 0) > 0);
  assert.ok(finish.type === 'finish' && finish.usage.outputTokens > (finish.usage.reasoningTokens ?? 0));
  assert.deepEqual(emu.requests[0]!.body.thinking, { type: 'enabled', budget_tokens: 1024 });
  const meta = parts[0]!;
  assert.equal(meta.type === 'response-metadata' && meta.provider, 'anthropic:claude-test');
});

test('emulator: a tool loop with thinking must send the signed block back first (else a 400)', async () => {
  const p = createAnthropicProvider({
    baseURL: emu.baseURL,
    apiKey: 'k',
    model: 'claude-test',
    thinking: { budgetTokens: 1024 },
  });
  const loop = (first: ModelRequest['messages'][number]['content']): ModelRequest => ({
    ...base,
    temperature: undefined,
    tools: [{ name: 't', description: 'd', inputSchema: {} }],
    messages: [
      ...base.messages,
      { role: 'assistant', content: [...first, { type: 'tool_use', id: 'toolu_1', name: 't', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'r' }] },
    ],
  });
  // The emulator refuses a thinking request whose tool loop does not start with a thinking block…
  const raw = await fetch(`${emu.baseURL}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 't', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'r' }] },
      ],
    }),
  });
  assert.equal(raw.status, 400);
  assert.match(await raw.text(), /must start with a thinking block/);
  // …so the adapter continues such a loop (answered by a model without thinking) with thinking off.
  const unthought = await collectStream(p.stream(loop([{ type: 'text', text: 'x' }])));
  assert.equal(unthought.stopReason, 'end_turn');
  assert.equal(emu.requests.at(-1)!.body.thinking, undefined);
  await assert.rejects(
    collectStream(p.stream(loop([{ type: 'thinking', text: 'a', signature: 'forged' }]))),
    /Invalid `signature`/,
  );
  const ok = await collectStream(p.stream(loop([{ type: 'thinking', text: 'a', signature: signThinking('a') }])));
  assert.equal(ok.stopReason, 'end_turn');
  assert.equal(emu.requests.at(-1)!.thinkingReturned, true);
});

test('native layout: the reasoning on a response first call leads its assistant message, before text and calls', () => {
  const names = new NativeToolNames(['react.read']);
  const ts = '2026-11-27T10:00:00.000Z';
  const item = (b: ReturnType<typeof makeBlock>, text: string): VisibleItem => ({ block: b, text }) as VisibleItem;
  const notes = makeBlock({ type: 'react.notes', author: 'assistant', turn_id: 'turn_1', ts, text: 'Reading.' });
  const call = (id: string, meta: Record<string, unknown>) =>
    makeBlock({
      type: 'react.tool.call',
      author: 'react',
      turn_id: 'turn_1',
      ts,
      call_id: id,
      meta: { tool_id: 'react.read', [PROVIDER_TOOL_USE_ID]: `toolu_${id}`, ...meta },
      text: JSON.stringify({ tool_id: 'react.read', params: { paths: ['x'] } }),
    });
  const c1 = call('tc_1', { [PROVIDER_REASONING]: [{ text: 'plan', signature: 'sig' }] });
  const c2 = call('tc_2', {});
  const result = (id: string) =>
    makeBlock({ type: 'react.tool.result', author: 'tool', turn_id: 'turn_1', ts, call_id: id, text: 'ok' });
  const blocks = [notes, c1, c2, result('tc_1'), result('tc_2')];
  const { messages, paired } = layoutNative(
    blocks.map((b) => item(b, blockText(b))),
    names,
  );
  const assistant = messages.find((m) => m.role === 'assistant')!;
  assert.deepEqual(
    assistant.content.map((p) => p.type),
    ['thinking', 'text', 'tool_use', 'tool_use'],
  );
  assert.deepEqual(assistant.content[0], { type: 'thinking', text: 'plan', signature: 'sig' });
  assert.deepEqual(paired, ['tc_1', 'tc_2']);
  const user = messages[messages.indexOf(assistant) + 1]!;
  assert.deepEqual(
    user.content.map((p) => (p.type === 'tool_result' ? p.toolUseId : p.type)),
    ['toolu_tc_1', 'toolu_tc_2'],
  );
});
