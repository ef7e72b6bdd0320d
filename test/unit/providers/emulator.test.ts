/** The emulator itself: wire shapes the real SDK accepts, uneven chunking, validation, recording. */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../../emulator/anthropic-emulator';

let emu: AnthropicEmulator;
let client: Anthropic;
before(async () => {
  emu = await startAnthropicEmulator();
  client = new Anthropic({ baseURL: emu.baseURL, apiKey: 'k', maxRetries: 0 });
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

const params = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'ping' }] };

test('non-streaming: a Message with content, stop_reason and usage (default echo)', async () => {
  const msg = await client.messages.create(params);
  assert.equal(msg.type, 'message');
  assert.deepEqual(msg.content, [{ type: 'text', text: 'echo: ping' }]);
  assert.equal(msg.stop_reason, 'end_turn');
  assert.equal(msg.usage.input_tokens, 1);
  assert.equal(emu.requests[0]!.stream, false);
});

test('streaming events accumulate in the SDK MessageStream helper to the scripted message', async () => {
  emu.enqueue(reply.toolUse('lookup', { ids: [1, 2, 3], deep: { k: 'v' } }, { id: 'toolu_x', text: 'Looking up.' }));
  const final = await client.messages.stream(params).finalMessage();
  assert.deepEqual(
    final.content.map((b) => b.type),
    ['text', 'tool_use'],
  );
  assert.equal((final.content[0] as { text: string }).text, 'Looking up.');
  assert.deepEqual(final.content[1], {
    type: 'tool_use',
    id: 'toolu_x',
    name: 'lookup',
    input: { ids: [1, 2, 3], deep: { k: 'v' } },
  });
  assert.equal(final.stop_reason, 'tool_use');
  assert.equal(final.usage.output_tokens, emu.requests[0]!.usage!.output_tokens);
});

test('SSE arrives in uneven chunks that cut through events', async () => {
  emu.enqueue(reply.text('a fairly long streamed answer '.repeat(10)));
  const chunks = await new Promise<string[]>((resolve, reject) => {
    const req = httpRequest(
      `${emu.baseURL}/v1/messages`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        const out: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (c: string) => out.push(c));
        res.on('end', () => resolve(out));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ ...params, stream: true }));
  });
  assert.ok(chunks.length > 5, `${chunks.length} chunks`);
  assert.ok(new Set(chunks.map((c) => c.length)).size > 2, 'chunk sizes vary');
  assert.ok(
    chunks.some((c) => !c.endsWith('\n\n')),
    'some chunk ends mid-event',
  );
  const events = chunks
    .join('')
    .split('\n\n')
    .filter(Boolean)
    .map((e) => /^event: (\S+)/.exec(e)![1]);
  assert.equal(events[0], 'message_start');
  assert.equal(events.at(-1), 'message_stop');
  assert.ok(events.includes('message_delta') && events.includes('content_block_stop'));
});

test('responders see the request; queue first, then the default responder', async () => {
  emu.respond((r) => reply.text(`model was ${String(r.body.model)}`));
  emu.enqueue(reply.text('queued'));
  const a = await client.messages.create(params);
  const b = await client.messages.create(params);
  assert.equal((a.content[0] as { text: string }).text, 'queued');
  assert.equal((b.content[0] as { text: string }).text, 'model was claude-test');
  assert.equal(emu.requests.length, 2);
});

test('invalid requests and unknown paths get Anthropic-shaped errors', async () => {
  await assert.rejects(
    client.messages.create({ ...params, max_tokens: 0 }),
    (e: unknown) => e instanceof Anthropic.BadRequestError && /max_tokens/.test(e.message),
  );
  await assert.rejects(client.models.list(), (e: unknown) => e instanceof Anthropic.NotFoundError);
});

test('a queued title reply waits for the title call, whichever request arrives first', async () => {
  emu.enqueue(reply.toolUse('conversation_title', { title: 'T' }), reply.text('the decision'));
  // The round's request first: it skips the title reply.
  const decision = await client.messages.create(params);
  assert.deepEqual(decision.content, [{ type: 'text', text: 'the decision' }]);
  const title = await client.messages.create({
    ...params,
    tools: [{ name: 'conversation_title', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'conversation_title' },
  });
  assert.equal((title.content[0] as { name: string }).name, 'conversation_title');
});
