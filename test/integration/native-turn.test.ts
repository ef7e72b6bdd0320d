/**
 * Whole native-mode turns through TurnWorkflow (real Temporal + Postgres + worker), the model
 * being the Anthropic emulator behind the real SDK; the workflow picks the decide activity by
 * `options.model.protocol`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { recordHistory } from '../support/fixtures';
import { createAnthropicProvider } from '../../activities/model/adapters/anthropic';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import {
  reply,
  startAnthropicEmulator,
  type AnthropicEmulator,
  type MessageReply,
} from '../emulator/anthropic-emulator';

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator();
  stack = await createTestStack('native_turn');
  await stack.startWorker({
    provider: () => createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test', model: 'claude-test' }),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

/** The gate titles each new conversation first (one structured call). */
const title = reply.toolUse('conversation_title', { title: 'Test conversation' });

const twoWrites: MessageReply = {
  kind: 'message',
  content: [
    { type: 'text', text: 'Writing both notes.' },
    {
      type: 'tool_use',
      id: 'toolu_a',
      name: 'react_write',
      input: { path: 'files/a.md', channel: 'internal', content: 'alpha' },
    },
    {
      type: 'tool_use',
      id: 'toolu_b',
      name: 'react_write',
      input: { path: 'files/b.md', channel: 'internal', content: 'beta' },
    },
  ],
};
const native = (extra: Record<string, unknown> = {}) =>
  ({
    model: { provider: 'anthropic', model: 'claude-test', protocol: 'native', ...extra },
  }) as unknown as TurnOptionsInput;

test('native turn: two parallel tool calls, then the final answer', async () => {
  const conv = uniqueId('conv');
  emu.enqueue(title, twoWrites, reply.text('Both notes are written.'));
  await stack.client.startTurn(conv, 'Write notes a and b', native());
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'complete');
  assert.equal(result.answer, 'Both notes are written.');
  assert.equal(result.rounds, 2);
  const blocks = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.turn_id === 'turn_1');
  // The title call runs beside round 1: its hidden block lands wherever that call ends.
  assert.equal(blocks.filter((b) => b.type === 'stage.gate').length, 1);
  assert.deepEqual(
    blocks.filter((b) => b.type !== 'stage.gate').map((b) => b.type),
    [
      'turn.header',
      'user.prompt',
      'react.notes',
      'react.round.start',
      'react.tool.call',
      'react.round.start',
      'react.tool.call',
      'react.tool.result',
      'react.tool.result',
      'assistant.completion',
    ],
  );
  const msgs = (
    emu.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }
  ).messages;
  const a = msgs.findIndex((m) => m.role === 'assistant');
  assert.deepEqual(
    msgs[a + 1]!.content.slice(0, 2).map((p) => p.tool_use_id),
    ['toolu_a', 'toolu_b'],
  );
  await recordHistory(stack.server.address, result.workflowId, 'native-turn-parallel-calls');
});

test('two-phase turn: the loop answer is replaced by the streamed synthesis', async () => {
  const conv = uniqueId('conv');
  emu.enqueue(title, twoWrites, reply.text('draft'), reply.text('I wrote a.md and b.md.'));
  await stack.client.startTurn(conv, 'Write notes a and b', native({ answerSynthesis: true }));
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'I wrote a.md and b.md.');
  const completions = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'assistant.completion');
  assert.deepEqual(
    completions.map((b) => [b.text, b.hidden === true]),
    [
      ['draft', true],
      ['I wrote a.md and b.md.', false],
    ],
  );
  await recordHistory(stack.server.address, result.workflowId, 'native-two-phase');
});

test('native turn: a steer during the model call cancels it and the finalize round answers', async () => {
  const conv = uniqueId('conv');
  emu.enqueue(
    title,
    { ...reply.text('a long answer that never finishes'), holdAfterEvents: 4 },
    reply.text('Stopped, as you asked.'),
  );
  const first = emu.requests.length;
  // The round's call, not the title call beside it (the two arrive in either order).
  const held = () =>
    emu.requests
      .slice(first)
      .find((q) => (q.body.tool_choice as { name?: string } | undefined)?.name !== 'conversation_title');
  await stack.client.startTurn(conv, 'Write an essay', native());
  await waitFor('the model call to stream', async () => held()?.status === 200);
  await stack.client.steer(conv, 'stop now');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'Stopped, as you asked.');
  // The cancellation reaches the activity with its next heartbeat, so the turn may finish first.
  await waitFor('the held stream to be aborted', async () => held()!.clientClosed === true, 10_000);
  const last = JSON.stringify(emu.requests.at(-1)!.body);
  assert.match(last, /STEER DURING TURN/);
  assert.match(last, /FINALIZE/);
  await recordHistory(stack.server.address, result.workflowId, 'native-steer-finalize');
});
