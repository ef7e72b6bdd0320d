/**
 * The approval card in a real browser (playwright-core + Debian's chromium, like web-chat.test.ts):
 * a call that needs approval shows a card live (tool, params as JSON, the model's reason), still
 * there after a reload; Edit params with params that fail the tool's schema shows the gateway's
 * message and changes nothing; a key without the approve scope is refused; Approve runs the call and
 * the answer shows. A spend cap that refuses the turn's model call shows its message as the answer,
 * live and after a reload. A turn queued under the tenant's turn limit shows its place in the header
 * and the turn, and runs in the same view once the turn ahead ends. Screenshots in
 * test-artifacts/approvals-web/.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Browser, Page } from 'playwright-core';
import { callTool, complete, createTestStack, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { sendTool } from '../support/approval-tool';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { deleteBudget, setBudget } from '../../store/budget-store';
import { deleteTurnLimit, setTurnLimit } from '../../store/turn-slots';
import { browserSuite, launchChromium, openSignedIn } from '../support/browser';

const { skip, available, test, shots: SHOTS } = browserSuite('approvals-web');

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let approver: string;
let writer: string;
const runs: Array<Record<string, unknown>> = [];

const send = sendTool(runs, {
  description: 'Sends an email.',
  params: z.object({ to: z.string().email(), body: z.string() }),
  answer: (params) => `sent to ${String(params.to)}`,
});

const script = ScriptSpecSchema.parse({
  structured: { conversation_title: { title: 'Approval' } },
  rounds: [
    callTool(
      'test.send',
      { to: 'team@example.com', body: 'The release is out.' },
      'the user asked me to email the team',
    ),
    complete('The email is sent.'),
  ],
});

before(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  stack = await createTestStack('approvalweb');
  await stack.startWorker({
    // A priced model name, so a spend cap has something to count.
    provider: () => ({ ...createScriptedProvider(script), model: 'claude-haiku-4-5' }),
    extraTools: [send],
  });
  approver = await stack.apiKey(['read', 'write', 'approve']);
  writer = await stack.apiKey(['read', 'write']);
  gw = await stack.startGateway();
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await stack?.teardown();
});

const openChat = (key: string, url = gw.url): Promise<Page> => openSignedIn(browser, url, key);

test(
  'the approval card: live, after a reload, a bad edit refused, no approve scope refused, Approve runs',
  { skip },
  async () => {
    const page = await openChat(approver);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByLabel('message').fill('Email the team that the release is out');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('.approval-card');
    await card.waitFor({ timeout: 30_000 });
    const text = (await card.textContent()) ?? '';
    assert.match(text, /test\.send waits for your approval/);
    assert.match(text, /the user asked me to email the team/);
    assert.match((await card.locator('pre.params').textContent()) ?? '', /"to": "team@example.com"/);
    await page.screenshot({ path: join(SHOTS, 'card.png'), fullPage: true });

    // After a reload the card is still there (the list comes from the gateway, not the stream).
    await page.reload();
    await card.waitFor({ timeout: 15_000 });
    const url = page.url();

    // Edited params that fail the tool's schema: the gateway's message, nothing decided.
    await card.getByRole('button', { name: 'Edit params' }).click();
    await card.getByLabel('edited params').fill('{"to": "not-an-email", "body": "x"}');
    await card.getByRole('button', { name: 'Approve edited' }).click();
    await card.locator('.approval-problem').waitFor();
    assert.match(
      (await card.locator('.approval-problem').textContent()) ?? '',
      /edited params for test\.send are invalid/,
    );
    await card.getByRole('button', { name: 'Cancel' }).click();

    // A key without the approve scope sees the card but cannot decide.
    const other = await openChat(writer, url);
    await other.reload(); // the conversation in the URL loads with the key now stored
    const otherCard = other.locator('.approval-card');
    await otherCard.waitFor({ timeout: 15_000 });
    await otherCard.getByRole('button', { name: 'Approve' }).click();
    await otherCard.locator('.approval-problem').waitFor();
    assert.match((await otherCard.locator('.approval-problem').textContent()) ?? '', /approve/);
    await other.close();
    assert.equal(runs.length, 0);

    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.msg.assistant', { hasText: 'The email is sent.' }).first().waitFor({ timeout: 30_000 });
    await card.waitFor({ state: 'detached', timeout: 15_000 });
    assert.deepEqual(runs, [{ to: 'team@example.com', body: 'The release is out.' }]);
    await page.screenshot({ path: join(SHOTS, 'approved.png'), fullPage: true });
    await page.close();
  },
);

test(
  "a spend cap's message reaches the web chat: the refused turn's answer names the budget, live and after a reload",
  { skip },
  async () => {
    const cap = { tenantId: 'acme', scope: 'tenant' as const, scopeId: '', period: 'day' as const };
    await setBudget(stack.db.pool, { ...cap, capUsd: 0 });
    try {
      const page = await openChat(approver);
      await page.getByRole('button', { name: 'New conversation' }).click();
      await page.getByLabel('message').fill('Email the team again');
      await page.getByRole('button', { name: 'Send' }).click();
      const capped = page.locator('.msg.assistant', { hasText: 'spend cap of tenant acme, per day (0.00 USD)' });
      await capped.first().waitFor({ timeout: 30_000 });
      await page.reload();
      await capped.first().waitFor({ timeout: 15_000 });
      await page.screenshot({ path: join(SHOTS, 'spend-cap.png'), fullPage: true });
      await page.close();
    } finally {
      await deleteBudget(stack.db.pool, cap);
    }
  },
);

test(
  "a turn queued under the tenant's turn limit shows its place, then runs in the same view when the turn ahead ends",
  { skip },
  async () => {
    await setTurnLimit(stack.db.pool, { tenantId: 'acme', maxTurns: 1 });
    try {
      const page = await openChat(approver);
      // The turn ahead holds the one slot while it waits for approval.
      await page.getByRole('button', { name: 'New conversation' }).click();
      await page.getByLabel('message').fill('Email the team: first');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.approval-card').waitFor({ timeout: 30_000 });
      const ahead = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('c')!;

      await page.getByRole('button', { name: 'New conversation' }).click();
      await page.getByLabel('message').fill('Email the team: second');
      await page.getByRole('button', { name: 'Send' }).click();
      const status = page.locator('.chat-header .status');
      await page.locator('.chat-header .status[data-status="queued"]').waitFor({ timeout: 30_000 });
      assert.match((await status.textContent()) ?? '', /Queued \(position 1\)/);
      const note = page.locator('.note.queued');
      assert.match((await note.textContent()) ?? '', /Queued — position 1 under your team's limit/);
      await page.screenshot({ path: join(SHOTS, 'queued.png'), fullPage: true });

      // The turn ahead is approved (through the API) and ends: this one leaves the queue and runs here.
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${gw.url}${path}`, {
          ...init,
          headers: { 'x-api-key': approver, 'content-type': 'application/json' },
        });
      const listing = await api(`/v1/conversations/${ahead}/approvals`);
      const listed = (await listing.json()) as { approvals?: Array<{ callId: string }> };
      assert.equal(listed.approvals?.length, 1, JSON.stringify(listed));
      const decided = await api(`/v1/conversations/${ahead}/approvals/${listed.approvals[0]!.callId}`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'approve' }),
      });
      assert.equal(decided.status, 200, await decided.clone().text());
      await page.locator('.approval-card').waitFor({ timeout: 30_000 }); // this turn's own call now waits
      await note.waitFor({ state: 'detached', timeout: 15_000 });
      assert.doesNotMatch((await status.textContent()) ?? '', /Queued/);
      await page.locator('.approval-card').getByRole('button', { name: 'Approve' }).click();
      await page.locator('.msg.assistant', { hasText: 'The email is sent.' }).first().waitFor({ timeout: 30_000 });
      await page.close();
    } finally {
      await deleteTurnLimit(stack.db.pool, 'acme');
    }
  },
);
