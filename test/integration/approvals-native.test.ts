/**
 * Approvals in native mode (issue 30): a denied call still gets its tool_result — the next request
 * to the model (the Anthropic emulator behind the real SDK, which checks the pairing) has a
 * tool_result for every tool_use, the denial text as the denied call's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createAnthropicProvider } from '../../activities/model/adapters/anthropic';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';

let stack: TestStack;
let emu: AnthropicEmulator;
const runs: string[] = [];

const send = {
  declaration: declareTool({
    id: 'test.send',
    description: 'Sends a message.',
    params: z.object({ to: z.string() }),
    strategy: 'exploration',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool test.send ${p.to}`,
    needsApproval: (p: { to: string }) => p.to !== 'me',
  }),
  impl: {
    id: 'test.send',
    async run(params) {
      runs.push(String(params.to));
      return { ok: true, text: `sent to ${String(params.to)}` };
    },
  } satisfies ToolImpl,
};

before(async () => {
  emu = await startAnthropicEmulator();
  stack = await createTestStack('approvals_native');
  await stack.startWorker({
    extraTools: [send],
    provider: () => createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test', model: 'claude-test' }),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const native = {
  model: { provider: 'anthropic', model: 'claude-test', protocol: 'native' },
} as unknown as TurnOptionsInput;

test('native mode: a denied call gets its tool_result; the next request pairs every tool_use', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  emu.enqueue(
    reply.toolUse('conversation_title', { title: 'Send' }),
    {
      kind: 'message',
      content: [
        { type: 'text', text: 'Sending to both, as asked.' },
        { type: 'tool_use', id: 'toolu_me', name: 'test_send', input: { to: 'me' } },
        { type: 'tool_use', id: 'toolu_boss', name: 'test_send', input: { to: 'boss' } },
      ],
    },
    reply.text('Sent to you; the other one was denied.'),
  );
  await stack.client.startTurn(conv, 'send it to me and the boss', native);
  const [item] = await waitFor('the boss call to wait', async () => {
    const items = await stack.client.approvals(conv).catch(() => []);
    return items.length > 0 ? items : undefined;
  });
  assert.equal(runs.length, 1, "the call needsApproval() let through ran (to: 'me')");
  await stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'deny', reason: 'not the boss' });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Sent to you; the other one was denied.');
  assert.deepEqual(runs, ['me']);
  const last = emu.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  const parts = last.messages.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [],
  );
  const uses = parts.filter((p) => p.type === 'tool_use').map((p) => p.id);
  const results = parts.filter((p) => p.type === 'tool_result');
  assert.deepEqual(uses, ['toolu_me', 'toolu_boss']);
  assert.deepEqual(
    results.map((p) => p.tool_use_id),
    ['toolu_me', 'toolu_boss'],
    'every tool_use has its tool_result',
  );
  const denied = results.find((p) => p.tool_use_id === 'toolu_boss')!;
  assert.match(JSON.stringify(denied.content), /denied by local: not the boss/);
});
