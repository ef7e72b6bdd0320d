/**
 * "The model sees what it should see" (issue 40): react.read of an image or a PDF within a byte
 * cap adds an image / document content block to the next round's request — Anthropic image and
 * document blocks, OpenAI-compatible image parts — with the file's exact bytes; a file over the
 * cap is refused with a message naming the cap; a model without vision gets a text note instead.
 * Real Temporal + Postgres, both providers' real SDKs against the repository's emulators. The
 * image is the user's attachment of an earlier turn (shown then; a placeholder in later turns
 * until the model reads it again).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../emulator/openai-emulator';
import { createAnthropicProvider } from '../../activities/model/adapters/anthropic';
import { createOpenAICompatibleProvider } from '../../activities/model/adapters/openai-compatible';
import { createScriptedProvider, resolveScript } from '../../activities/model/adapters/scripted';
import { stageTurnAttachments } from '../../client/attachments/stage';
import { loadBlocks } from '../../store/timeline-store';
import { isDecisionRequest } from '../support/note-turns';
import { noisePng } from '../support/files';
import { INLINE_MAX_BYTES } from '../../activities/turn/attachments';
import type { TurnOptionsInput } from '../../core/turn/contracts';

let stack: TestStack;
let anthropicEmu: AnthropicEmulator;
let openaiEmu: OpenAIEmulator;
const chart = noisePng(40, 40, 7); // ~4.8 kB: over the 4 000 base64 characters older turns show
before(async () => {
  anthropicEmu = await startAnthropicEmulator({ chunkDelayMs: 0 });
  openaiEmu = await startOpenAIEmulator({ chunkDelayMs: 0, apiKey: 'sk-emu' });
  stack = await createTestStack('read_media');
  const anthropic = createAnthropicProvider({ baseURL: anthropicEmu.baseURL, apiKey: 'k', model: 'claude-sonnet-5-5' });
  const openai = (model: string) =>
    createOpenAICompatibleProvider({ baseURL: openaiEmu.baseURL, apiKey: 'sk-emu', model });
  await stack.startWorker({
    provider: (cfg) =>
      cfg.provider === 'anthropic'
        ? anthropic
        : cfg.provider === 'openai'
          ? openai(cfg.model ?? 'gpt-4o')
          : createScriptedProvider(resolveScript(cfg.script)),
  });
});
after(async () => {
  await stack.teardown();
  await anthropicEmu.stop();
  await openaiEmu.stop();
});

type Part = { type: string; source?: { media_type: string; data: string }; image_url?: { url: string }; text?: string };
const partsOf = (body: Record<string, unknown>): Part[] =>
  (body.messages as Array<{ content: string | Part[] }>).flatMap((m) =>
    typeof m.content === 'string' ? [] : m.content,
  );

/** Turn 1 attaches the chart (and `extra`); returns the conversation id. */
type Model = NonNullable<TurnOptionsInput['model']>;

async function attachInTurn1(
  model: Model,
  enqueue: () => void,
  extra: Array<{ name: string; bytes: Buffer }> = [],
): Promise<string> {
  const conv = uniqueId('conv');
  const messageId = uniqueId('msg');
  const refs = await stageTurnAttachments(
    stack.db.pool,
    { conversationId: conv, prompt: 'here is my chart', messageId, options: { model } },
    [{ name: 'chart.png', bytes: chart }, ...extra],
  );
  enqueue();
  await stack.client.startTurn(conv, 'here is my chart', { model }, messageId, refs);
  assert.equal((await stack.client.result(conv, 1)).answer, 'noted');
  return conv;
}

test('Anthropic: react.read of an image attaches it to the next round with its exact bytes; over the cap is refused naming it', async () => {
  anthropicEmu.reset();
  const big = noisePng(1400, 1300, 3);
  assert.ok(big.length > INLINE_MAX_BYTES.image);
  const model: Model = { provider: 'anthropic' };
  const conv = await attachInTurn1(
    model,
    () => anthropicEmu.enqueue(reply.toolUse('conversation_title', { title: 'Charts' }), reply.text(complete('noted'))),
    [{ name: 'big.png', bytes: big }],
  );
  anthropicEmu.reset();
  anthropicEmu.enqueue(
    reply.text(
      callTool('react.read', { paths: ['fi:turn_1.user.attachments/chart.png', 'fi:turn_1.user.attachments/big.png'] }),
    ),
    reply.text(complete('a noisy chart')),
  );
  await stack.client.startTurn(conv, 'look at the chart again', { model });
  assert.equal((await stack.client.result(conv, 2)).answer, 'a noisy chart');
  const rounds = anthropicEmu.requests.filter((r) => isDecisionRequest(r.body));
  assert.equal(rounds.length, 2);
  assert.deepEqual(
    partsOf(rounds[0]!.body).filter((p) => p.type === 'image'),
    [],
    'turn 1’s image is a placeholder in turn 2 until it is read again',
  );
  const images = partsOf(rounds[1]!.body).filter((p) => p.type === 'image');
  assert.equal(images.length, 1, 'the chart, read: attached; the big one: refused');
  assert.equal(images[0]!.source!.media_type, 'image/png');
  assert.equal(Buffer.from(images[0]!.source!.data, 'base64').compare(chart), 0, 'the exact bytes');
  const result = (await loadBlocks(stack.db.pool, conv)).find(
    (b) => b.type === 'react.tool.result' && b.turn_id === 'turn_2',
  )!;
  assert.match(result.text!, /"status":"attached"/);
  assert.match(
    result.text!,
    new RegExp(`over the ${INLINE_MAX_BYTES.image}-byte limit for attaching a image/png file`),
  );
});

test('OpenAI-compatible: the image goes as an image part; a model without vision gets a text note instead', async () => {
  for (const [model, sees] of [
    ['gpt-4o', true],
    ['local-llm', false],
  ] as const) {
    openaiEmu.reset();
    const conv = await attachInTurn1({ provider: 'openai', model }, () =>
      openaiEmu.enqueue(oreply.text(JSON.stringify({ title: 'Charts' })), oreply.text(complete('noted'))),
    );
    openaiEmu.reset();
    openaiEmu.enqueue(
      oreply.text(callTool('react.read', { paths: ['fi:turn_1.user.attachments/chart.png'] })),
      oreply.text(complete('seen')),
    );
    await stack.client.startTurn(conv, 'look at the chart again', { model: { provider: 'openai', model } });
    assert.equal((await stack.client.result(conv, 2)).answer, 'seen');
    const last = openaiEmu.requests.at(-1)!;
    const parts = partsOf(last.body);
    const urls = parts.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url);
    if (sees) {
      assert.deepEqual(urls, [`data:image/png;base64,${chart.toString('base64')}`], model);
    } else {
      assert.deepEqual(urls, [], model);
      assert.match(JSON.stringify(last.body.messages), /this model cannot see images/, model);
    }
  }
});
