/**
 * `dreact inspect` rebuilds a round's request byte for byte: a conversation through the Anthropic
 * adapter (real SDK) against the emulator, compacted on a small context budget, whose last turn
 * hides a block with react.hide; the rebuilt request of the rounds after the compaction and after
 * the hide, mapped by the adapter, equals what the emulator received (system, tools, messages and
 * every cache checkpoint).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { emulatedAnthropic } from '../support/emulated-providers';
import {
  startAnthropicEmulator,
  reply,
  type AnthropicEmulator,
  type RecordedRequest,
} from '../emulator/anthropic-emulator';
import { toAnthropicParams } from '../../activities/model/adapters/anthropic-request';
import { inspectRoundRequest } from '../../client/inspect';
import { inspectText } from '../../core/evals/inspect';
import { loadBlocks } from '../../store/timeline-store';
import { createGatewayApp } from '../../apps/gateway/app';

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ minCacheableTokens: 64 });
  stack = await createTestStack('evals_inspect');
  const anthropic = emulatedAnthropic(emu);
  await stack.startWorker({ provider: () => anthropic });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const iteration = (req: RecordedRequest) =>
  Number(/Iteration (\d+)\//.exec(JSON.stringify((req.body.messages as unknown[]).at(-1)))?.[1] ?? 1);
const isTitle = (req: RecordedRequest) =>
  (req.body.tool_choice as { name?: string } | undefined)?.name === 'conversation_title';

test('inspect is byte-identical to the request sent, for rounds after a compaction and a hide', async () => {
  const conv = uniqueId('conv');
  emu.reset();
  emu.respond((req) => {
    if (isTitle(req)) return reply.toolUse('conversation_title', { title: 'Inspect test' });
    const n = iteration(req);
    const final = /final turn/.test(JSON.stringify((req.body.messages as unknown[]).at(-1)));
    if (n === 1)
      return reply.text(
        callTool('react.write', {
          path: `notes/${req.index}.md`,
          channel: 'internal',
          content: `note ${req.index} `.repeat(500),
          kind: 'file',
        }),
      );
    if (final && n === 2)
      return reply.text(callTool('react.hide', { path: 'ar:turn_7.react.notes.r1', replacement: 'notes folded' }));
    return reply.text(complete(`done ${req.index}`));
  });
  const turns = 7;
  for (let t = 1; t <= turns; t++) {
    await stack.client.startTurn(conv, t === turns ? 'final turn: write, hide, answer' : `turn ${t}: write a note`, {
      model: { provider: 'anthropic' },
      contextMaxTokens: 8_000,
    });
    const r = await stack.client.result(conv, t);
    assert.match(r.answer, /^done /, `turn ${t}`);
  }
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.ok(
    blocks.some((b) => b.type === 'conv.range.summary'),
    'the conversation was compacted',
  );
  assert.ok(
    blocks.some((b) => b.turn_id === `turn_${turns}` && b.hidden),
    'the last turn hid a block',
  );

  const sent = emu.requests.filter((q) => !isTitle(q) && !q.summarizer);
  for (const round of [2, 3]) {
    const inspected = await inspectRoundRequest(
      stack.server.env.client,
      { conversationId: conv, turnIndex: turns, round },
      stack.taskQueue,
    );
    const { params } = toAnthropicParams(inspected.request, { model: 'claude-sonnet-5-5', maxTokens: 8192 });
    const match = sent.filter(
      (q) => JSON.stringify(q.body.system) === JSON.stringify(params.system) && iteration(q) === round,
    );
    // The last turn's request of that round (earlier turns had one too).
    const last = match.at(-1)!;
    assert.ok(last, `round ${round}: a request was sent`);
    assert.deepEqual(params.system, last.body.system, `round ${round}: system`);
    assert.deepEqual(params.messages, last.body.messages, `round ${round}: messages`);
    assert.deepEqual(params.tools ?? null, (last.body.tools as unknown) ?? null, `round ${round}: tools`);
    assert.match(inspectText(inspected), /=>\[cache\]/);
  }
  // The gateway's route answers the same request, and names a round that does not exist.
  const KEY = 'inspect-test-key';
  const app = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [KEY], listen: false });
  const get = (round: number) =>
    app.fetch(
      new Request(`http://gw/v1/conversations/${conv}/turns/${turns}/rounds/${round}/request`, {
        headers: { 'x-api-key': KEY },
      }),
    );
  const res = await get(3);
  assert.equal(res.status, 200);
  const body = (await res.json()) as { request: unknown; turnId: string };
  const direct = await inspectRoundRequest(
    stack.server.env.client,
    { conversationId: conv, turnIndex: turns, round: 3 },
    stack.taskQueue,
  );
  assert.equal(body.turnId, `turn_${turns}`);
  assert.deepEqual(body.request, JSON.parse(JSON.stringify(direct.request)));
  const missing = await get(9);
  assert.equal(missing.status, 404);
  assert.match(((await missing.json()) as { error: { message: string } }).error.message, /has no round 9/);
  await app.close();
});
