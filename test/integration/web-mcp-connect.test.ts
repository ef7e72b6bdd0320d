/**
 * The web chat's "Connect <server>" button for an OAuth MCP server (issue 43 item 5), in a real
 * browser (playwright-core + Debian's chromium): a colleague has logged in (so the server's tools
 * are listed); a turn of a user without a login, whose MCP call found the server unauthorised, shows the observation and the button; the button starts the login through the
 * gateway (`POST /v1/mcp-servers/secure/oauth`) and opens the authorization server in a new tab,
 * which comes back to the gateway's callback ("connected"); the tokens are stored for the key's
 * tenant and user, and the next turn's call goes through. Without chromium the test skips and says
 * so — except in CI, where it fails.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Browser } from 'playwright-core';
import { callTool, complete, createTestStack, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { startOAuthMcpServer, OAUTH_SCOPE, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { finishMcpLogin, startMcpLogin } from '../../store/mcp-oauth/login';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';
import { assertAxeClean, browserSuite, launchChromium, signIn } from '../support/browser';

const { skip, available, test, shots: SHOTS } = browserSuite('web-mcp-connect');

let stack: TestStack;
let gw: RunningGateway;
let mcp: OAuthMcpServer;
let browser: Browser;
let key: string;

before(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  process.env.DREACT_MCP_TOKEN_KEY = randomBytes(32).toString('base64');
  mcp = await startOAuthMcpServer();
  const agents = mkdtempSync(join(tmpdir(), 'dreact-web-mcp-'));
  writeFileSync(
    join(agents, 'secure.yaml'),
    stringify({
      name: 'secure',
      description: 'Uses an OAuth MCP server.',
      mcp: { servers: { secure: { url: mcp.url, oauth: { scopes: [OAUTH_SCOPE] } } } },
    }),
  );
  stack = await createTestStack('webmcp');
  const script = ScriptSpecSchema.parse({
    rounds: [callTool('mcp.secure.echo', { text: 'from the web' }), complete('Done.')],
    structured: { conversation_title: { title: 'Secure' } },
  });
  await stack.startWorker({
    agents: { dir: agents },
    mcp: { connectTimeoutMs: 15_000, backoffMs: 50, maxBackoffMs: 200 },
    provider: () => createScriptedProvider(script),
  });
  key = await stack.apiKey(['read', 'write'], { userId: 'ann' });
  gw = await stack.startGateway();
  // A colleague (bob) logged in and ran a turn: the server's tools are listed; ann has no login yet.
  const target = {
    store: new McpCredentialStore(stack.db.pool, mcpTokenKey()),
    owner: { tenantId: 'acme', userId: 'bob', server: 'secure' },
    serverUrl: mcp.url,
    redirectUrl: 'http://127.0.0.1:1/callback',
  };
  const state = randomBytes(16).toString('base64url');
  const authorize = await fetch(await startMcpLogin(target, state), { redirect: 'manual' });
  await finishMcpLogin(target, new URL(authorize.headers.get('location')!).searchParams.get('code')!);
  const bob = await stack.apiKey(['read', 'write'], { userId: 'bob' });
  const started = await fetch(`${gw.url}/v1/conversations/bobs/turns`, {
    method: 'POST',
    headers: { 'x-api-key': bob, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'hello', agent: 'secure' }),
  });
  assert.equal(started.status, 202, await started.text());
  await stack.client.result('acme~web~bob~bobs', 1);
  browser = await launchChromium();
});
after(async () => {
  if (!available) return;
  await browser?.close();
  await stack?.teardown();
  await mcp?.close();
});

test('an unauthorised MCP server gets a Connect button; after the login the next turn calls it', { skip }, async () => {
  // A context of its own: the login opens a second tab (a page made by browser.newPage cannot).
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  await page.goto(gw.url);
  await signIn(page, key);
  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.getByLabel('agent').selectOption('secure');
  await page.getByLabel('message').fill('echo something');
  await page.getByRole('button', { name: 'Send' }).click();
  const connect = page.getByRole('button', { name: 'Connect secure' });
  await connect.waitFor({ timeout: 30_000 });
  await page.locator('.msg.assistant:not([data-live])').first().waitFor({ timeout: 30_000 });
  await assertAxeClean(page, SHOTS, 'needs-auth');

  // The login: a new tab goes to the authorization server and back to the gateway's callback.
  const [tab] = await Promise.all([page.waitForEvent('popup'), connect.click()]);
  await tab.waitForURL(/\/oauth\/mcp\/callback/, { timeout: 30_000 });
  assert.match((await tab.textContent('body')) ?? '', /MCP server secure is connected/);
  assert.match((await page.locator('.mcp-connect-note').textContent()) ?? '', /Authorise in the new tab/);
  const rows = (
    await stack.db.pool.query(`SELECT tenant_id, user_id FROM mcp_oauth_credentials WHERE tokens IS NOT NULL`)
  ).rows;
  assert.deepEqual(rows.map((r) => r.user_id).sort(), ['ann', 'bob']);

  // The next turn's call goes through with the stored tokens: no button on it.
  const before = mcp.calls.length;
  await page.getByLabel('message').fill('again');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.msg.assistant:not([data-live])').nth(1).waitFor({ timeout: 30_000 });
  assert.equal(mcp.calls.length, before + 1, 'the second turn reached the MCP server');
  assert.equal(await page.getByRole('button', { name: 'Connect secure' }).count(), 1, 'only the first turn asks');
});
