/**
 * The web chat in a real browser: playwright-core drives Debian's chromium against `dreact
 * gateway`'s page, on a real Temporal dev server (with its UI) and Postgres. Tokens stream into
 * the page; a citation links to the sources panel; Steer stops a turn and its finalize answer
 * shows; a reload mid-turn resumes the stream without loss or duplication; another tenant's key
 * sees none of the first tenant's conversations; Temporal UI shows a finished turn's activity
 * summaries. Screenshots are kept in test-artifacts/web-chat/.
 *
 * Without chromium (`apt-get install chromium`; .ci/run installs it) the tests skip and say so —
 * except in CI, where they fail.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { answerRound, callTool, complete, createTestStack, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema, type ScriptSpec } from '../../core/model/config';
import { openLibrary } from '../../activities/library/library';
import { freePort } from '../../apps/stack/embedded';
import { browserSuite, launchChromium, openSignedIn } from '../support/browser';

// Skips (counted in npm test's summary) without chromium; under CI a missing chromium fails the file.
const { skip, available, test, shots: SHOTS } = browserSuite('web-chat');

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let keyA: string;
let keyB: string;
let script: ScriptSpec;

const useScript = (s: Partial<ScriptSpec> & { rounds: string[] }) => {
  script = ScriptSpecSchema.parse({ structured: { conversation_title: { title: 'Browser chat' } }, ...s });
};

before(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  const uiPort = await freePort(28233);
  stack = await createTestStack('webchat', { server: { ui: true, uiPort, extraArgs: [] } });
  const skills = mkdtempSync(join(tmpdir(), 'dreact-skills-'));
  mkdirSync(join(skills, 'guide'));
  writeFileSync(join(skills, 'guide', 'SKILL.md'), '# Guide\n\nSay hello politely.\n');
  writeFileSync(join(skills, 'guide', 'sources.yaml'), '- url: https://example.org/guide\n  title: The guide\n');
  useScript({ rounds: [complete('hi')] });
  await stack.startWorker({
    provider: () => createScriptedProvider(script),
    library: await openLibrary(stack.db, { skillsDir: skills }),
  });
  keyA = await stack.apiKey(['read', 'write']);
  keyB = await stack.apiKey(['read', 'write'], { tenantId: 'globex', projectId: 'app' });
  gw = await stack.startGateway(stack.server.uiUrl ? { temporalUiUrl: stack.server.uiUrl } : {});
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await stack?.teardown();
});

/** The chat signed in with `key` (on a phone the key field is in the conversations drawer). */
const openChat = (key: string, width = 1200): Promise<Page> =>
  openSignedIn(browser, gw.url, key, { width, height: 800 });

async function send(page: Page, prompt: string): Promise<void> {
  await page.getByLabel('message').fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Samples the live answer until the turn is done; returns the distinct partial texts seen. */
async function watchLive(page: Page, until: () => Promise<boolean>): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 400 && !(await until()); i++) {
    const t = (
      (await page
        .locator('[data-live] .text')
        .first()
        .textContent({ timeout: 250 })
        .catch(() => null)) ?? ''
    ).trim();
    if (t && t !== seen.at(-1)) seen.push(t);
    await page.waitForTimeout(25);
  }
  return seen;
}

test(
  'tokens stream into the page; a tool card, the usage footer and a citation linked to the sources panel',
  { skip },
  async () => {
    useScript({
      rounds: [
        callTool('react.read', { paths: ['sk:guide'] }),
        answerRound('The guide says to greet everyone politely and warmly [[S:1]].'),
      ],
      chunkSize: 3,
      latencyMs: 40,
    });
    const page = await openChat(keyA);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await send(page, 'What does the guide say?');
    const answer = page.locator('.msg.assistant:not([data-live])');
    const partials = await watchLive(page, async () => (await answer.count()) > 0);
    await answer.first().waitFor({ timeout: 30_000 });
    assert.ok(partials.length >= 3, `streamed in pieces: ${JSON.stringify(partials)}`);
    assert.ok(
      partials.every((p, i) => i === 0 || p.startsWith(partials[i - 1]!.slice(0, 5))),
      `text grows: ${JSON.stringify(partials)}`,
    );
    assert.match((await answer.first().textContent()) ?? '', /greet everyone politely/);
    await page.locator('.sources #source-1 a').waitFor();
    assert.equal(await page.locator('.sources #source-1 a').getAttribute('href'), 'https://example.org/guide');
    assert.match((await page.locator('.footer').first().textContent()) ?? '', /\d+ in · \d+ out/);
    assert.ok((await page.locator('.tool-card summary', { hasText: 'react.read' }).count()) >= 1);
    await page.screenshot({ path: join(SHOTS, 'answer.png'), fullPage: true });
    await answer.locator('.cite a[data-sid="1"]').click();
    assert.equal(new URL(page.url()).hash, '#source-1');
    // Keyboard: the composer is reachable and submits with the keyboard.
    await page.getByLabel('message').focus();
    assert.equal(
      await page.evaluate('document.activeElement && document.activeElement.getAttribute("aria-label")'),
      'message',
    );
    await page.close();
  },
);

test('Steer stops a running turn and its finalize answer shows', { skip }, async () => {
  useScript({ rounds: [answerRound(`${'A long story. '.repeat(40)}The end.`)], chunkSize: 4, latencyMs: 60 });
  const page = await openChat(keyA);
  await page.getByRole('button', { name: 'New conversation' }).click();
  await send(page, 'Tell me a long story');
  try {
    await page.locator('[data-live] .text', { hasText: 'A long' }).waitFor({ timeout: 30_000 });
  } catch (err) {
    // Seen once in CI (1 of 1 064, not reproduced): keep what the page showed for the next look.
    await page.screenshot({ path: join(SHOTS, 'steer-live-failed.png'), fullPage: true });
    const shown = await page.locator('body').innerText();
    writeFileSync(join(SHOTS, 'steer-live-failed.txt'), shown);
    throw new Error(`the live answer never showed "A long"; the page said:\n${shown.slice(0, 2000)}`, { cause: err });
  }
  // Steer sends what is typed (issue 41: it always sent "stop and summarise").
  await page.getByLabel('follow-up').fill('stop and summarise');
  await page.getByRole('button', { name: 'Steer' }).click();
  const final = page.locator('.msg.assistant:not([data-live])', { hasText: 'Stopped as asked' });
  try {
    await final.waitFor({ timeout: 30_000 });
  } catch (err) {
    await page.screenshot({ path: join(SHOTS, 'steer-failed.png'), fullPage: true });
    writeFileSync(join(SHOTS, 'steer-failed.txt'), await page.locator('body').innerText());
    throw err;
  }
  assert.doesNotMatch((await final.textContent()) ?? '', /The end\./);
  await page.screenshot({ path: join(SHOTS, 'steer.png'), fullPage: true });
  await page.close();
});

test('a reload mid-turn resumes the stream without loss or duplication', { skip }, async () => {
  const text = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
  useScript({ rounds: [answerRound(text)], chunkSize: 5, latencyMs: 80 });
  const page = await openChat(keyA, 390); // phone width
  await page.getByRole('button', { name: 'New conversation' }).click();
  await send(page, 'count for me');
  try {
    await page.locator('[data-live] .text', { hasText: 'word3' }).waitFor({ timeout: 30_000 });
  } catch (err) {
    await page.screenshot({ path: join(SHOTS, 'reload-failed.png'), fullPage: true });
    writeFileSync(join(SHOTS, 'reload-failed.txt'), await page.locator('body').innerText());
    throw err;
  }
  await page.reload();
  // The resumed page rebuilds the running turn from its first event (the words before the reload too).
  await page.locator('[data-live] .text', { hasText: /^word0 word1 word2/ }).waitFor({ timeout: 10_000 });
  const answer = page.locator('.msg.assistant:not([data-live])');
  await answer.first().waitFor({ timeout: 30_000 });
  assert.equal(await answer.count(), 1);
  assert.equal(
    ((await answer.first().locator('.answer').textContent()) ?? '').trim(),
    text,
    'every word once, in order',
  );
  await page.screenshot({ path: join(SHOTS, 'reload-phone.png'), fullPage: true });
  await page.close();
});

test('the current plan shows its steps with their status, live and after a reload', { skip }, async () => {
  useScript({
    rounds: [
      callTool('react.plan', { mode: 'new', steps: ['Collect the facts', 'Draft the answer', 'Check it'] }, 'plan'),
      callTool('react.write', { path: 'd.md', channel: 'internal', content: 'draft', kind: 'file' }, '✓ [1] collected'),
      callTool('react.read', { paths: ['fi:{{turn}}.files/d.md'] }, '✓ [2] drafted\n… [3] checking'),
      answerRound('Checked: the draft holds.'),
    ],
    chunkSize: 20,
    latencyMs: 40,
  });
  const page = await openChat(keyA);
  await page.getByRole('button', { name: 'New conversation' }).click();
  await send(page, 'Plan it, then answer');
  const statuses = (scope: string) =>
    page.locator(`${scope} .plan li`).evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
  // Live: the plan appears with every step pending, then its first step is acknowledged mid-turn.
  await page.locator('[data-live] .plan li', { hasText: 'Collect the facts' }).waitFor({ timeout: 30_000 });
  await page.locator('[data-live] .plan li[data-status="done"]', { hasText: 'Collect the facts' }).waitFor();
  const answer = page.locator('.msg.assistant:not([data-live])');
  await answer.first().waitFor({ timeout: 30_000 });
  assert.deepEqual(await statuses('.messages'), ['done', 'done', 'in_progress']);
  assert.match((await page.locator('.messages .plan .plan-state').textContent()) ?? '', /open · 2\/3 done/);
  await page.screenshot({ path: join(SHOTS, 'plan.png'), fullPage: true });
  // After a reload the stored snapshot shows the same steps and statuses.
  await page.reload();
  await page.locator('.messages .plan li').first().waitFor({ timeout: 10_000 });
  assert.deepEqual(await statuses('.messages'), ['done', 'done', 'in_progress']);
  assert.equal(await page.locator('.messages .plan').count(), 1, 'one current plan');
  await page.close();
});

test('the key typed is the key used, even when the page renders again before "Use key"', { skip }, async () => {
  // A render between typing and "Use key" reset the field to the stored key (none) — the page then
  // said "missing API key" (one CI failure of the reload test, whose page had no key).
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(gw.url);
  await page.getByLabel('API key').fill(keyA);
  await page.getByRole('button', { name: 'New conversation' }).click(); // renders the page again
  await page.getByRole('button', { name: 'Use key' }).click();
  await page.locator('.sidebar li').first().waitFor({ timeout: 10_000 });
  const stored = await page.evaluate("localStorage.getItem('dreact.key')");
  assert.equal(stored, keyA);
  await page.close();
});

test("another tenant's key sees none of the first tenant's conversations", { skip }, async () => {
  const a = await openChat(keyA);
  await a.locator('.sidebar li').first().waitFor();
  assert.ok((await a.locator('.sidebar li').count()) >= 3);
  await a.close();
  const b = await openChat(keyB);
  await b.waitForTimeout(500);
  assert.equal(await b.locator('.sidebar li').count(), 0);
  await b.screenshot({ path: join(SHOTS, 'tenant-b.png') });
  await b.close();
});

test(
  'Temporal UI shows the finished turn with its activity summaries, fairness key and search attributes',
  { skip },
  async () => {
    assert.ok(stack.server.uiUrl, 'the dev server runs its UI');
    const list = await stack.server.env.client.workflow.list({
      query: 'TenantId = "acme" AND WorkflowType = "TurnWorkflow"',
    });
    let workflowId = '';
    for await (const w of list) if (w.status.name === 'COMPLETED') workflowId = w.workflowId;
    assert.ok(workflowId, 'a finished turn of tenant acme');
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${stack.server.uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
    await page
      .getByText(/decide round 1/)
      .first()
      .waitFor({ timeout: 30_000 });
    const history = await page.locator('body').innerText();
    writeFileSync(join(SHOTS, 'temporal-ui.txt'), history);
    assert.match(history, /tool react\.read sk:guide/, 'the tool activity summary');
    assert.match(history, /Fairness\s+acme/, 'the fairness key');
    await page.screenshot({ path: join(SHOTS, 'temporal-ui.png'), fullPage: true });
    await page.getByText('Search Attributes', { exact: true }).first().click();
    await page.getByText('TenantId').first().waitFor({ timeout: 10_000 });
    const attributes = await page.locator('body').innerText();
    assert.match(attributes, /TenantId[\s\S]{0,80}acme/);
    assert.match(attributes, /ProjectId[\s\S]{0,80}web/);
    await page.screenshot({ path: join(SHOTS, 'temporal-ui-search-attributes.png'), fullPage: true });
    await page.close();
  },
);
