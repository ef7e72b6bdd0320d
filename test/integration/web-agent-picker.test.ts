/**
 * The web chat's agent picker in a real browser (playwright-core + Debian's chromium, as
 * web-chat.test.ts): a new conversation lists the agents (GET /v1/agents), the chosen one runs the
 * first turn (its instructions reach the model) and binds the conversation, after which the
 * picker is gone; an agent another tenant's `visibility` keeps to itself is not listed. Without chromium the test skips and says so — except in CI, where it fails.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { complete, createTestStack, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { listTurns } from '../../store/turn-store';
import { browserSuite, launchChromium, openSignedIn } from '../support/browser';

const { skip, available, test } = browserSuite('web-agent-picker');

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let key: string;
const systems: string[] = [];

before(async () => {
  if (!available) return;
  stack = await createTestStack('webagents');
  const agents = mkdtempSync(join(tmpdir(), 'dreact-web-agents-'));
  writeFileSync(
    join(agents, 'poet.yaml'),
    'name: poet\ndescription: Answers in verse.\ninstructions: You answer in verse (POET-PERSONA).\n',
  );
  // Another tenant's agent (visibility, issue 36): the acme key's picker never lists it.
  writeFileSync(
    join(agents, 'globex_only.yaml'),
    'name: globex_only\ndescription: Globex only.\nvisibility: { tenants: [globex] }\n',
  );
  const script = ScriptSpecSchema.parse({
    rounds: [complete('Roses are red.')],
    structured: { conversation_title: { title: 'A poem' } },
  });
  await stack.startWorker({
    agents: { dir: agents },
    provider: () => {
      const inner = createScriptedProvider(script);
      return {
        id: inner.id,
        stream(request, options) {
          systems.push(request.system.map((s) => s.text).join('\n'));
          return inner.stream(request, options);
        },
      };
    },
  });
  key = await stack.apiKey(['read', 'write']);
  gw = await stack.startGateway();
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await stack?.teardown();
});

test('a new conversation picks its agent; the first turn runs it and binds the conversation', { skip }, async () => {
  const page = await openSignedIn(browser, gw.url, key, { width: 1200, height: 800 });
  await page.getByRole('button', { name: 'New conversation' }).click();
  const picker = page.getByLabel('agent');
  await picker.waitFor();
  assert.deepEqual(await picker.locator('option').allTextContents(), ['default', 'poet']);
  await picker.selectOption('poet');
  assert.match((await page.locator('.agent-description').textContent()) ?? '', /Answers in verse/);
  await page.getByLabel('message').fill('write me a poem');
  await page.getByRole('button', { name: 'Send' }).click();
  const answer = page.locator('.msg.assistant:not([data-live])');
  await answer.first().waitFor({ timeout: 30_000 });
  assert.match((await answer.first().textContent()) ?? '', /Roses are red/);
  assert.equal(await page.getByLabel('agent').count(), 0, 'a bound conversation has no picker');
  const decision = systems.find((s) => s.includes('# Response protocol'));
  assert.match(decision ?? '', /^You answer in verse \(POET-PERSONA\)/);
  const conv = (await stack.db.pool.query<{ conversation_id: string }>('SELECT conversation_id FROM turns LIMIT 1'))
    .rows[0]!.conversation_id;
  assert.equal((await listTurns(stack.db.pool, conv))[0]!.agentName, 'poet');
  await page.close();
});
