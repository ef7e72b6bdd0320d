/**
 * Anthropic extended thinking in a native-mode turn (real Temporal and Postgres; the real SDK
 * through the provider registry against the Anthropic emulator): `model.thinking.budgetTokens`.
 * The first round thinks and calls a tool; its thinking block, with the signature the emulator
 * issued, is kept on the call block and sent back first in the assistant message of the next
 * round — the emulator refuses the round otherwise, as the API does. The thinking streams on the
 * thinking channel; thinking tokens are in the usage (part of output tokens, so in the cost).
 * The title call (a forced tool) runs without thinking, which the API does not allow there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { reply, signThinking, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { defaultProviderResolver } from '../../activities/model/registry';
import { PROVIDER_REASONING } from '../../core/model/native-render';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { isDecisionRequest } from '../support/note-turns';

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ chunkDelayMs: 1 });
  stack = await createTestStack('thinking');
  await stack.startWorker({
    provider: defaultProviderResolver(
      { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: emu.baseURL },
      { provider: 'scripted' },
    ),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const THOUGHT = 'The user wants a note; I write it first, then confirm.';

test('native turn with extended thinking across a tool call: the signed thinking block goes back, the answer follows', async () => {
  emu.reset();
  emu.enqueue(
    reply.toolUse('conversation_title', { title: 'Thinking' }),
    reply.thinking(
      THOUGHT,
      reply.toolUse(
        'react_write',
        { path: 'files/n.md', channel: 'internal', content: 'note' },
        { id: 'toolu_w', text: 'Writing the note.' },
      ),
    ),
    reply.thinking('It is written.', reply.text('The note is written.')),
  );
  const conv = uniqueId('conv');
  const options = {
    model: { provider: 'anthropic', model: 'claude-sonnet-5-5', protocol: 'native', thinking: { budgetTokens: 2048 } },
  } as unknown as TurnOptionsInput;
  await stack.client.startTurn(conv, 'write a note', options);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'The note is written.');
  assert.equal(r.rounds, 2);

  const titleCall = emu.requests.find((q) => !isDecisionRequest(q.body))!;
  assert.equal(titleCall.body.thinking, undefined, 'no thinking on a forced tool call');
  const rounds = emu.requests.filter((q) => isDecisionRequest(q.body));
  assert.equal(rounds.length, 2);
  for (const q of rounds) assert.deepEqual(q.body.thinking, { type: 'enabled', budget_tokens: 2048 });
  assert.equal(rounds[1]!.thinkingReturned, true, 'the signed thinking block came back');
  const msgs = rounds[1]!.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
  const assistant = msgs.find((m) => m.role === 'assistant')!;
  assert.deepEqual(
    assistant.content.map((b) => b.type),
    ['thinking', 'text', 'tool_use'],
  );
  assert.deepEqual(
    { thinking: assistant.content[0]!.thinking, signature: assistant.content[0]!.signature },
    { thinking: THOUGHT, signature: signThinking(THOUGHT) },
  );

  const call = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call')!;
  assert.deepEqual(call.meta[PROVIDER_REASONING], [{ text: THOUGHT, signature: signThinking(THOUGHT) }]);

  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  const thought = events
    .filter((e) => e.kind === 'delta' && e.channel === 'thinking')
    .map((e) => String(e.payload?.text))
    .join('');
  assert.ok(thought.includes(THOUGHT) && thought.includes('It is written.'), thought);
  const reasoning = events
    .filter((e) => e.kind === 'usage')
    .map((e) => (e.payload?.usage as { reasoningTokens?: number } | undefined)?.reasoningTokens ?? 0);
  assert.ok(reasoning.filter((n) => n > 0).length >= 2, 'both rounds report thinking tokens');

  const rows = await stack.db.pool.query(
    `SELECT output_tokens, cost_usd FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision' ORDER BY created_at`,
    [conv],
  );
  const thinkingTokens = rounds.map((q) => q.usage!.output_tokens_details?.thinking_tokens ?? 0);
  rows.rows.forEach((row, i) => {
    assert.ok(row.output_tokens >= thinkingTokens[i]! && thinkingTokens[i]! > 0, 'output tokens include thinking');
    assert.ok(Number(row.cost_usd) > 0);
  });
});
