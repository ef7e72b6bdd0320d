/**
 * Canvases stream as they are written, in a real browser (playwright-core + Debian's chromium, as
 * web-chat.test.ts): a native-tool-calling turn whose slow model (the Anthropic emulator behind the
 * official SDK, a few ms per chunk) writes a JSON widget with react.write and then stops writing
 * until the test has looked — the widget's first attribute is on screen while the model's response
 * is unfinished and no answer shows; after the turn the widget has every attribute, and a reload
 * shows the same one widget (rebuilt from the stored call, not a second one from the stored fold).
 * Screenshots in test-artifacts/web-chat/. Without chromium the test skips and says so — except
 * in CI, where it fails.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { browserSuite, launchChromium, openSignedIn } from '../support/browser';
import { emulatedProviders } from '../support/emulated-providers';
import {
  reply,
  startAnthropicEmulator,
  type AnthropicEmulator,
  type MessageReply,
} from '../emulator/anthropic-emulator';

const { skip, available, test, shots: SHOTS } = browserSuite('web-chat');

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let anthropic: AnthropicEmulator;
let key: string;

before(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  // A slow model: every chunk of its stream a few milliseconds after the last.
  anthropic = await startAnthropicEmulator({ chunkDelayMs: 4 });
  stack = await createTestStack('webcanvas');
  await stack.startWorker({
    provider: emulatedProviders({ anthropic, openai: { baseURL: 'http://127.0.0.1:9/v1' } }),
    // The agent the chat picks: native tool calling on the emulator.
    agents: {
      definitions: [
        {
          name: 'canvas',
          description: 'Draws canvases.',
          model: { provider: 'anthropic', model: 'claude-test', protocol: 'native' },
        },
      ],
    },
  });
  // A warm-up native turn: a cold worker's first decide attempt (module loading on a loaded
  // machine) can outlive its heartbeat timeout, and its retry would take the next scripted reply.
  anthropic.enqueue(reply.toolUse('conversation_title', { title: 'Warm-up' }), reply.text('warm'));
  const warm = uniqueId('warm');
  await stack.client.startTurn(warm, 'warm up', {
    model: { provider: 'anthropic', model: 'claude-test', protocol: 'native' },
  } as unknown as TurnOptionsInput);
  await stack.client.result(warm, 1);
  key = await stack.apiKey(['read', 'write']);
  gw = await stack.startGateway();
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await stack?.teardown();
  await anthropic.stop();
});

const openChat = (): Promise<Page> => openSignedIn(browser, gw.url, key);

test(
  "canvases stream as they are written: a JSON widget's first attribute is on screen before the model's answer ends",
  { skip },
  async () => {
    const widget = {
      title: 'Sales by region',
      total: 4211,
      regions: ['north 1800', 'south 2411'],
      summary: `South leads. ${'The model is still writing this long summary. '.repeat(4)}`,
    };
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const write: MessageReply = {
      kind: 'message',
      content: [
        { type: 'text', text: 'Drawing the widget.' },
        {
          type: 'tool_use',
          name: 'react_write',
          input: { path: 'sales.json', channel: 'canvas', content: JSON.stringify(widget, null, 2) },
        },
      ],
      // All but the last 12 events: the summary's tail, the block's stop, message_delta, message_stop.
      pauseAfterEvents: { after: -12, until: released },
    };
    anthropic.enqueue(
      reply.toolUse('conversation_title', { title: 'Sales' }),
      write,
      reply.text('The sales widget is on the canvas.'),
    );
    const page = await openChat();
    try {
      await page.getByRole('button', { name: 'New conversation' }).click();
      await page.getByLabel('agent').selectOption('canvas');
      await page.getByLabel('message').fill('Show the sales as a widget');
      await page.getByRole('button', { name: 'Send' }).click();
      const canvas = page.locator('section.canvas[data-kind="json"]');
      await canvas
        .locator('.attr[data-key="title"]')
        .waitFor({ timeout: 60_000 })
        .catch(async (err: unknown) => {
          await page.screenshot({ path: join(SHOTS, 'canvas-streaming-failed.png'), fullPage: true });
          const shown = (await page.locator('body').innerText()).slice(0, 2000);
          const asked = anthropic.requests
            .map(
              (r) =>
                `${r.status ?? '-'}:${String(r.completed)}:${r.clientClosed ? 'closed' : ''}:${r.reply === write ? 'WRITE' : r.reply ? 'queued' : 'echo'}:${JSON.stringify((r.body as { tool_choice?: unknown }).tool_choice ?? null)}`,
            )
            .join(' ');
          throw new Error(`the widget's first attribute never showed; requests ${asked}; the page said:\n${shown}`, {
            cause: err,
          });
        });
      // On screen while the model is still writing: no answer, the widget still streaming, its last attribute not there.
      // The title streams piece by piece: wait for all of it (the model pauses after it).
      await canvas.locator('.attr[data-key="title"] dd', { hasText: 'Sales by region' }).waitFor({ timeout: 60_000 });
      assert.equal(anthropic.requests.find((r) => r.reply === write)?.completed, false, 'the model is still writing');
      assert.equal(await page.locator('.msg.assistant:not([data-live])').count(), 0, 'no answer yet');
      assert.equal(await canvas.locator('.attr[data-key="summary"]').count(), 0);
      assert.equal(await canvas.locator('.badge', { hasText: 'streaming' }).count(), 1);
      await page.screenshot({ path: join(SHOTS, 'canvas-streaming.png'), fullPage: true });
    } finally {
      release();
    }
    await page
      .locator('.msg.assistant:not([data-live])', { hasText: 'The sales widget is on the canvas.' })
      .waitFor({ timeout: 60_000 });
    const done = page.locator('section.canvas[data-kind="json"]');
    assert.equal(await done.count(), 1);
    assert.deepEqual(await done.locator('.attr').evaluateAll((els) => els.map((e) => e.getAttribute('data-key'))), [
      'title',
      'total',
      'regions',
      'summary',
    ]);
    await page.screenshot({ path: join(SHOTS, 'canvas-done.png'), fullPage: true });
    // A reload rebuilds the one widget from the stored call (the stored fold of its attributes is not a second one).
    await page.reload();
    const rebuilt = page.locator('section.canvas[data-kind="json"]');
    await rebuilt.locator('.attr[data-key="summary"]').waitFor({ timeout: 30_000 });
    assert.equal(await rebuilt.count(), 1);
    assert.match((await rebuilt.locator('.attr[data-key="summary"] dd').textContent()) ?? '', /South leads/);
    await page.close();
  },
);
