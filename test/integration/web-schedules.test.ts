/**
 * The web chat's Schedules section in a real browser (playwright-core + Debian's chromium, as
 * web-chat.test.ts), over the gateway, the dev Temporal server, Postgres and a worker with a
 * scripted model: the key's schedules are listed (`GET /v1/schedules`); opening one lists its runs
 * as conversations (`GET /v1/schedules/:id`); a run's link opens its conversation, whose answer
 * shows; a refused run is listed without a link; axe finds nothing serious. A key without `write`
 * (which the gateway refuses schedules to) shows no section. Without chromium the test skips and
 * says so — except in CI, where it fails.
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { gatewayCaller, scriptedAnswer } from '../support/schedule-kit';
import type { RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { needs, requiring } from '../support/requirements';
import { NEED_CHROMIUM, assertAxeClean, launchChromium } from '../support/browser';

const need = NEED_CHROMIUM;
const skip = needs(need);
const available = skip === false;
const test = requiring(nodeTest, need);
const SHOTS = join(__dirname, '..', '..', 'test-artifacts', 'web-schedules');

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let key: string;
let reader: string;

before(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  stack = await createTestStack('webshed');
  await stack.startWorker({
    defaultModel: scriptedAnswer('The morning report is ready.', 0),
  });
  const apiKey = (scopes: Array<'read' | 'write'>) =>
    createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes }).then((k) => k.key);
  key = await apiKey(['read', 'write']);
  reader = await apiKey(['read']);
  gw = await stack.startGateway({ allowScripted: true });
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await gw?.close();
  await stack?.teardown();
});

const api = gatewayCaller(
  () => gw.url,
  () => key,
);

interface Run {
  runWorkflowId: string;
  conversation: string | null;
  outcome: string;
}

test("the Schedules section lists the key's schedules and a schedule's runs as conversations", { skip }, async () => {
  const made = await api('POST', '/v1/schedules', { agent: 'default', cron: '0 7 * * *', prompt: 'Morning report' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id as string;
  // A second schedule whose spend cap refuses its run: a run with no conversation to open.
  const capped = await api('POST', '/v1/schedules', {
    agent: 'default',
    cron: '0 7 * * *',
    prompt: 'Capped report',
    maxUsdPerDay: 0,
  });
  const cappedId = capped.body.id as string;
  // Two runs of the one schedule: a run's workflow id ends in its time to the second, so a second apart.
  for (const s of [id, cappedId, id]) {
    assert.equal((await api('POST', `/v1/schedules/${s}/trigger`)).status, 200);
    await new Promise((r) => setTimeout(r, 1_100));
  }
  const runs = await waitFor(
    'two completed runs',
    async () => {
      const d = (await api('GET', `/v1/schedules/${id}`)).body as { runs: Run[] };
      return d.runs.length === 2 && d.runs.every((r) => r.outcome === 'completed') ? d.runs : undefined;
    },
    40_000,
    200,
  );
  await waitFor('the refused run', async () => {
    const d = (await api('GET', `/v1/schedules/${cappedId}`)).body as { runs: Run[] };
    return d.runs[0]?.outcome === 'refused';
  });

  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  await page.goto(gw.url);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use key' }).click();
  const section = page.getByRole('region', { name: 'Schedules' });
  await section.waitFor();
  const summaries = section.locator('summary');
  assert.equal(await summaries.count(), 2);
  assert.match(
    (await summaries.allTextContents()).join('\n'),
    /Morning report[\s\S]*Capped report|Capped report[\s\S]*Morning report/,
  );

  // Open the schedule: its runs, each a link to its conversation.
  await section.locator('summary', { hasText: 'Morning report' }).click();
  const links = section.getByRole('list', { name: 'runs' }).getByRole('link');
  await links.first().waitFor();
  assert.equal(await links.count(), 2);
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(
    hrefs.sort(),
    runs.map((r) => `#c=${encodeURIComponent(r.conversation!)}`).sort(),
    "each run links to its conversation (the caller's id)",
  );
  assert.match((await links.first().textContent()) ?? '', /completed/);
  // The refused run is listed, with no link.
  await section.locator('summary', { hasText: 'Capped report' }).click();
  const refused = section.locator('details', { hasText: 'Capped report' }).locator('li');
  await refused.first().waitFor();
  assert.match((await refused.first().textContent()) ?? '', /refused/);
  assert.equal(await refused.getByRole('link').count(), 0);
  await assertAxeClean(page, SHOTS, 'schedules-open');
  await page.screenshot({ path: join(SHOTS, 'schedules-open.png') });

  // Opening a run opens its conversation.
  await links.first().click();
  const answer = page.locator('.msg.assistant:not([data-live])');
  await answer.first().waitFor({ timeout: 20_000 });
  assert.match((await answer.first().textContent()) ?? '', /The morning report is ready/);
  const hash = decodeURIComponent(new URL(page.url()).hash);
  assert.ok(
    runs.some((r) => hash === `#c=${r.conversation}`),
    `the run's conversation is open (${hash})`,
  );
  assert.equal(await links.first().getAttribute('aria-current'), 'page');
  await page.screenshot({ path: join(SHOTS, 'schedule-run-open.png') });

  // A key the gateway refuses schedules to (no write scope) shows no section.
  // (A context of its own: the key is kept in the page's localStorage.)
  const otherContext = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const other = await otherContext.newPage();
  await other.goto(gw.url);
  await other.getByLabel('API key').fill(reader);
  await other.getByRole('button', { name: 'Use key' }).click();
  await other.getByRole('button', { name: 'New conversation' }).waitFor();
  await other.waitForTimeout(500);
  assert.equal(await other.getByRole('region', { name: 'Schedules' }).count(), 0);
  await context.close();
  await otherContext.close();
  for (const s of [id, cappedId]) await api('DELETE', `/v1/schedules/${s}`);
});
