/**
 * The MCP client with OAuth 2.1 (issue 43, item 5), end to end on the real stack: a real
 * OAuth-protected MCP server on loopback (test/support/oauth-mcp-server.ts: the SDK's auth router,
 * bearer middleware and Streamable HTTP server), the dev Temporal server, Postgres, a worker and the
 * `dreact` CLI as separate processes.
 *
 * - Before any login a turn's ANNOUNCE says "MCP server secure needs authorisation: dreact mcp
 *   login secure", and the worker does not retry in the background (each turn start tries once).
 * - `dreact mcp login secure` prints the authorization URL, waits on its loopback port; the test
 *   plays the browser (follows the URL with fetch, then the redirect): discovery, dynamic client
 *   registration, PKCE and the code exchange happen through the SDK; the scopes of the agent file
 *   are the ones asked for.
 * - The next turn calls the protected tool; after the access token expires the SDK refreshes it
 *   and the call succeeds.
 * - At rest the tokens and client are sealed (no token in the row), and neither the timeline nor
 *   the workflow history holds one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { startOAuthMcpServer, OAUTH_SCOPE, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { loadBlocks } from '../../store/timeline-store';
import type { Block } from '../../core/timeline/block';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let mcp: OAuthMcpServer;
let gw: GatewayApp;
/** A key of tenant acme bound to user ann (the web chat's user). */
let annKey: string;
const home = mkdtempSync(join(tmpdir(), 'dreact-mcp-oauth-home-'));
const KEY = randomBytes(32).toString('base64');
const requests: string[] = [];
/** Requests to /mcp the bearer check refused. */
let refused = 0;

const SCRIPTS: Record<string, string[]> = {
  oauth_idle: [complete('idle')],
  oauth_echo: [callTool('mcp.secure.echo', { text: 'behind oauth' }), complete('called')],
  oauth_whoami: [callTool('mcp.secure.whoami', {}), complete('whoami')],
};

before(async () => {
  process.env.DREACT_MCP_TOKEN_KEY = KEY;
  mcp = await startOAuthMcpServer();
  // Counts the 401s (a retry loop would make many).
  const originalFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const res = await originalFetch(input, init);
    if (res.status === 401 && String(input instanceof Request ? input.url : input).startsWith(mcp.url)) refused++;
    return res;
  };
  const dir = mkdtempSync(join(tmpdir(), 'dreact-mcp-oauth-'));
  writeFileSync(
    join(dir, 'secure.yaml'),
    stringify({ name: 'secure', mcp: { servers: { secure: { url: mcp.url, oauth: { scopes: [OAUTH_SCOPE] } } } } }),
  );
  stack = await createTestStack('mcpoauth');
  annKey = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: 'ann', scopes: ['read', 'write'] })
  ).key;
  gw = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
  });
  await stack.startWorker({
    agents: { dir },
    mcp: { connectTimeoutMs: 15_000, backoffMs: 50, maxBackoffMs: 200 },
    provider: (config) => {
      // A script named on the CLI (SCRIPTS), or one a gateway turn carries inline.
      const rounds = typeof config.script === 'string' ? SCRIPTS[config.script] : config.script?.rounds;
      const inner = createScriptedProvider(
        ScriptSpecSchema.parse({ rounds: rounds ?? [complete('?')], chunkSize: 512 }),
      );
      return {
        ...inner,
        stream: (request, options) => {
          requests.push(
            request.messages.flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : ''))).join('\n'),
          );
          return inner.stream(request, options);
        },
      };
    },
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
  await mcp?.close();
});

const env = () => ({ ...stackCliEnv(stack), DREACT_HOME: home, DREACT_MCP_TOKEN_KEY: KEY });
const cliTurn = (conv: string, script: string) =>
  runDreact(
    [
      'turn',
      `run ${script}`,
      '--conversation',
      conv,
      '--agent',
      'secure',
      '--provider',
      'scripted',
      '--script',
      script,
      '--json',
    ],
    { env: env(), cwd: home },
  );
const results = (blocks: Block[], turn: string) =>
  blocks.filter((b) => b.turn_id === turn && b.type === 'react.tool.result');
const lastAnnounce = (from: number) => {
  const r =
    requests
      .slice(from)
      .filter((x) => x.includes('[ANNOUNCE'))
      .at(-1) ?? '';
  return r.slice(r.lastIndexOf('[ANNOUNCE'));
};

/** `dreact mcp login secure`, the test playing the browser: follows the printed URL and its redirect. */
async function login(): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', '..', 'bin', 'dreact.cjs'), 'mcp', 'login', 'secure', '--timeout', '60'],
    {
      env: { ...process.env, ...env(), NO_COLOR: '1' },
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number>((r) => child.on('exit', (c) => r(c ?? 1)));
  const authUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stdout);
      if (m && stdout.includes('Waiting for the redirect')) resolve(m[1]!);
    });
    void exited.then((c) => reject(new Error(`login exited ${c} before printing the URL: ${stdout} ${stderr}`)));
  });
  const authorize = await fetch(authUrl, { redirect: 'manual' });
  assert.equal(authorize.status, 302, await authorize.text());
  const callback = await fetch(authorize.headers.get('location')!);
  assert.equal(callback.status, 200);
  assert.match(await callback.text(), /Authorised/);
  const code = await exited;
  return { code, stdout, stderr };
}

test('OAuth MCP server: needs-authorisation notice without a retry loop, dreact mcp login, a protected call, refresh after expiry, sealed at rest', async () => {
  const conv = uniqueId('conv');
  // 1. No login yet: the turn says what to do; the worker tries once per turn start, not in a loop.
  let from = requests.length;
  const first = await cliTurn(conv, 'oauth_idle');
  assert.equal(first.code, 0, first.stderr);
  assert.match(lastAnnounce(from), /MCP server secure needs authorisation: dreact mcp login secure/);
  const refusedAfterFirst = refused;
  assert.ok(refusedAfterFirst >= 1, 'the turn start tried the server');
  const second = await cliTurn(conv, 'oauth_idle');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(refused - refusedAfterFirst, refusedAfterFirst, 'one more attempt at the next turn start, none between');
  assert.equal(mcp.as.counts.registered, 0, 'the worker never registers a client');

  // 2. The login: discovery, dynamic registration, PKCE, the code exchange — with the agent file's scopes.
  const done = await login();
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /Open this URL to authorise durable-react for MCP server secure/);
  assert.match(done.stdout, /MCP server secure: authorised for tenant local/);
  assert.equal(mcp.as.counts.registered, 1);
  assert.equal(mcp.as.counts.exchanged, 1);
  assert.deepEqual(mcp.as.requestedScopes.at(-1), [OAUTH_SCOPE]);
  const authUrl = new URL(/^(http:\/\/\S+\/authorize\?\S+)$/m.exec(done.stdout)![1]!);
  assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authUrl.searchParams.get('resource'), mcp.url);

  // 3. The next turn calls the protected tool.
  from = requests.length;
  const third = await cliTurn(conv, 'oauth_echo');
  assert.equal(third.code, 0, third.stderr);
  let blocks = await loadBlocks(stack.db.pool, conv);
  const [echo] = results(blocks, 'turn_3');
  assert.equal(echo!.text, 'echo: behind oauth');
  assert.equal(echo!.meta.ok, true);
  assert.doesNotMatch(lastAnnounce(from), /needs authorisation/);

  // 4. The access token expires: the SDK refreshes it (401 → refresh grant) and the call goes through.
  mcp.expireAccessTokens();
  const fourth = await cliTurn(conv, 'oauth_whoami');
  assert.equal(fourth.code, 0, fourth.stderr);
  blocks = await loadBlocks(stack.db.pool, conv);
  const [who] = results(blocks, 'turn_4');
  assert.equal(who!.text, 'authorized');
  assert.equal(mcp.as.counts.refreshed, 1);

  // 5. At rest: sealed (no issued token in the row); nothing of them in the timeline or history.
  const tokens = mcp.as.issued;
  const clientSecrets = [...mcp.as.clients.values()].map((c) => c.client_secret).filter((s): s is string => !!s);
  assert.ok(tokens.length >= 4 && clientSecrets.length === 1);
  const row = (
    await stack.db.pool.query(`SELECT * FROM mcp_oauth_credentials WHERE tenant_id = 'local' AND server = 'secure'`)
  ).rows[0] as Record<string, unknown>;
  assert.match(String(row.tokens), /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.match(String(row.client_info), /^v1\./);
  const rowText = JSON.stringify(row);
  const everywhere = [rowText, JSON.stringify(blocks)];
  for (const n of [1, 2, 3, 4]) {
    const history = await stack.server.env.client.workflow.getHandle(`conv/${conv}/turn/${n}`).fetchHistory();
    everywhere.push(JSON.stringify(history));
  }
  for (const text of everywhere)
    for (const secret of [...tokens, ...clientSecrets])
      assert.ok(!text.includes(secret), 'no token or client secret in plain text');
  assert.ok(!rowText.includes('access_token') && !rowText.includes('refresh_token'));
});

const call = (method: string, url: string, key?: string, body?: unknown) =>
  gw.fetch(
    new Request(url.startsWith('http') ? url : `http://gw${url}`, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );

test("the web chat's connect button: a user without a login gets the observation on a call; the gateway's start and callback routes log them in; their own tokens serve their turns", async () => {
  // Runs after the CLI test: the server's tools are listed (the local tenant logged in), this user has not.
  const key = annKey;
  const conv = uniqueId('conv');
  const id = `acme~web~ann~${conv}`;
  const turn = async (index: number, rounds: string[]) => {
    const r = await call('POST', `/v1/conversations/${conv}/turns`, key, {
      prompt: `turn ${index}`,
      agent: 'secure',
      options: { model: { provider: 'scripted', script: { rounds } } },
    });
    assert.equal(r.status, 202, await r.clone().text());
    await stack.client.result(id, index);
    return (await loadBlocks(stack.db.pool, id)).filter(
      (b) => b.turn_id === `turn_${index}` && b.type === 'react.tool.result',
    );
  };
  // 1. The tool is offered (listed), the call is one observation saying what to do — not a retry.
  const [needs] = await turn(1, [callTool('mcp.secure.echo', { text: 'ann' }), complete('needs login')]);
  assert.equal(needs!.meta.ok, false);
  assert.equal(needs!.text, 'MCP server secure needs authorisation: dreact mcp login secure');
  assert.equal((needs!.meta.mcp as { needs_auth?: boolean }).needs_auth, true);

  // 2. Connect: start → the authorization URL; the browser follows it; the callback finishes the exchange.
  assert.equal((await call('POST', '/v1/mcp-servers/secure/oauth', undefined, {})).status, 401);
  assert.equal((await call('POST', '/v1/mcp-servers/nope/oauth', key, {})).status, 404);
  const started = await call('POST', '/v1/mcp-servers/secure/oauth', key, {});
  assert.equal(started.status, 200, await started.clone().text());
  const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  assert.equal(authorize.status, 302);
  const back = new URL(authorize.headers.get('location')!);
  assert.equal(back.pathname, '/oauth/mcp/callback');
  const done = await call('GET', back.href);
  assert.equal(done.status, 200);
  assert.match(await done.text(), /MCP server secure is connected/);
  // The state is single use.
  assert.equal((await call('GET', back.href)).status, 400);

  // 3. Their next turn calls the tool with their own tokens (a row of their own, beside the local tenant's).
  const [echo] = await turn(2, [callTool('mcp.secure.echo', { text: 'ann' }), complete('called')]);
  assert.equal(echo!.text, 'echo: ann');
  const owners = (
    await stack.db.pool.query(
      `SELECT tenant_id, user_id FROM mcp_oauth_credentials WHERE tokens IS NOT NULL ORDER BY tenant_id`,
    )
  ).rows;
  assert.deepEqual(owners, [
    { tenant_id: 'acme', user_id: 'ann' },
    { tenant_id: 'local', user_id: '' },
  ]);
});

test('dreact mcp login with a pre-registered client: a secret without --client-id, or an unset variable, is refused by name and writes nothing', async () => {
  const before = (await stack.db.pool.query(`SELECT count(*)::int AS n FROM mcp_oauth_credentials`)).rows[0].n;
  const alone = await runDreact(['mcp', 'login', 'secure', '--client-secret-env', 'MCP_SECRET'], { env: env() });
  assert.notEqual(alone.code, 0);
  assert.match(alone.stderr, /--client-secret-env: give --client-id too/);
  const unset = await runDreact(
    ['mcp', 'login', 'secure', '--client-id', 'registered', '--client-secret-env', 'DREACT_TEST_UNSET_SECRET'],
    { env: { ...env(), DREACT_TEST_UNSET_SECRET: '' } },
  );
  assert.notEqual(unset.code, 0);
  assert.match(unset.stderr, /--client-secret-env DREACT_TEST_UNSET_SECRET: that environment variable is not set/);
  const after = (await stack.db.pool.query(`SELECT count(*)::int AS n FROM mcp_oauth_credentials`)).rows[0].n;
  assert.equal(after, before);
});
