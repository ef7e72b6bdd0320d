/**
 * `oauth.cross_app_access` (SEP-990) past the conformance scenario: the worker's McpConnection
 * against a loopback enterprise IdP (RFC 8693 token exchange), an authorization server (RFC 7523
 * jwt-bearer grant, client_secret_basic) and an MCP server (the SDK's bearer middleware and
 * Streamable HTTP server; protected-resource metadata naming the authorization server).
 *
 * - An expired access token (the server answers 401) is renewed: a fresh ID-JAG from the IdP, with
 *   the ID token the secret holds now (rotated), and the call succeeds.
 * - An authorization server whose metadata names another issuer gets no ID-JAG, and with `issuer`
 *   the client secret goes to no other authorization server: the IdP is never asked, and the
 *   connection says why.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpConnection } from '../../activities/mcp/connection';
import { workerAuthProvider } from '../../activities/mcp/machine-auth';
import { McpHttpServerSchema } from '../../core/mcp/config';
import { buildMcpServer } from '../support/mcp-servers';

const closers: Array<() => void> = [];
after(() => closers.forEach((c) => c()));

async function listen(app: express.Express): Promise<string> {
  const s = await new Promise<ReturnType<express.Express['listen']>>((r) => {
    const h = app.listen(0, '127.0.0.1', () => r(h));
  });
  closers.push(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** IdP + authorization server + MCP server; `claimedIssuer` overrides the AS metadata's issuer. */
async function startEnterprise(claimedIssuer?: string) {
  const exchanges: Array<Record<string, string>> = [];
  const jags = new Map<string, { aud: string; resource: string }>();
  const access = new Map<string, { expired: boolean }>();
  const idp = express().use(express.urlencoded({ extended: false }));
  idp.post('/token', (req, res) => {
    const b = req.body as Record<string, string>;
    exchanges.push(b);
    const jag = `jag_${randomUUID()}`;
    jags.set(jag, { aud: b.audience!, resource: b.resource! });
    res.json({ access_token: jag, issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag', token_type: 'N_A' });
  });
  const idpUrl = await listen(idp);

  const app = express().use(express.urlencoded({ extended: false }));
  const base = await listen(app);
  const mcpUrl = `${base}/mcp`;
  app.get('/.well-known/oauth-protected-resource/mcp', (_q, res) =>
    res.json({ resource: mcpUrl, authorization_servers: [base] }),
  );
  app.get('/.well-known/oauth-authorization-server', (_q, res) =>
    res.json({
      issuer: claimedIssuer ?? base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
    }),
  );
  const grants: string[] = [];
  app.post('/token', (req, res) => {
    const b = req.body as Record<string, string>;
    const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
    const jag = jags.get(b.assertion ?? '');
    grants.push(b.grant_type!);
    if (basic !== 'dreact:as-secret' || b.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' || !jag)
      return void res.status(400).json({ error: 'invalid_grant' });
    if (jag.aud !== base || jag.resource !== mcpUrl || b.resource !== mcpUrl)
      return void res.status(400).json({ error: 'invalid_target' });
    jags.delete(b.assertion!); // one use
    const token = `at_${randomUUID()}`;
    access.set(token, { expired: false });
    res.json({ access_token: token, token_type: 'Bearer', expires_in: 3600 });
  });
  const verifier = {
    verifyAccessToken: async (token: string) => {
      const t = access.get(token);
      if (!t || t.expired) throw new InvalidTokenError('expired');
      return { token, clientId: 'dreact', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    },
  };
  const calls: string[] = [];
  app.all(
    '/mcp',
    express.json(),
    requireBearerAuth({ verifier, resourceMetadataUrl: `${base}/.well-known/oauth-protected-resource/mcp` }),
    (req, res) => {
      void (async () => {
        const server = buildMcpServer({ authorized: () => true, onCall: (n) => calls.push(n) });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      })();
    },
  );
  return { idpUrl, mcpUrl, exchanges, grants, calls, expire: () => access.forEach((t) => (t.expired = true)) };
}

function connect(e: { idpUrl: string; mcpUrl: string }, secrets: Record<string, string>, issuer?: string) {
  const config = McpHttpServerSchema.parse({
    url: e.mcpUrl,
    oauth: {
      cross_app_access: {
        idp_token_endpoint: `${e.idpUrl}/token`,
        idp_client_id: 'dreact-at-idp',
        id_token: '${secrets.ID}',
        client_id: 'dreact',
        client_secret: '${secrets.KEY}',
        ...(issuer ? { issuer } : {}),
      },
    },
  });
  const secret = (n: string) => secrets[n]!;
  return new McpConnection({
    name: 'ent',
    config,
    secret,
    authProvider: workerAuthProvider(config, secret)!,
    backoffMs: 50,
  });
}

test('cross_app_access: ID token → ID-JAG → access token; a 401 renews it with the ID token the secret holds now', async () => {
  const e = await startEnterprise();
  const secrets = { ID: 'id-token-1', KEY: 'as-secret' };
  const conn = connect(e, secrets);
  await conn.start();
  assert.equal(conn.state, 'ready', conn.reason);
  await conn.callTool('echo', { text: 'a' }, { timeoutMs: 10_000 });
  assert.equal(e.exchanges.length, 1);
  assert.deepEqual(
    { ...e.exchanges[0] },
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      audience: new URL(e.mcpUrl).origin,
      subject_token: 'id-token-1',
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      resource: e.mcpUrl,
      client_id: 'dreact-at-idp',
    },
  );
  e.expire();
  secrets.ID = 'id-token-2'; // rotated (a projected service-account token, say)
  await conn.callTool('echo', { text: 'b' }, { timeoutMs: 10_000 });
  assert.deepEqual(
    e.exchanges.map((x) => x.subject_token),
    ['id-token-1', 'id-token-2'],
  );
  assert.deepEqual(e.grants, Array(2).fill('urn:ietf:params:oauth:grant-type:jwt-bearer'), 'one jwt-bearer grant each');
  assert.deepEqual(e.calls, ['echo', 'echo']);
  await conn.close();
});

test('cross_app_access: an authorization server naming another issuer gets no ID-JAG', async () => {
  const e = await startEnterprise('https://elsewhere.example.test');
  const conn = connect(e, { ID: 'id-token-1', KEY: 'as-secret' });
  await conn.start();
  assert.notEqual(conn.state, 'ready');
  assert.match(conn.reason ?? '', /names issuer https:\/\/elsewhere\.example\.test: no ID-JAG is asked for/);
  assert.equal(e.exchanges.length, 0, 'the IdP was never asked');
  await conn.close();
});

test('cross_app_access with issuer: another authorization server gets neither the secret nor an ID-JAG', async () => {
  const e = await startEnterprise();
  const conn = connect(e, { ID: 'id-token-1', KEY: 'as-secret' }, 'https://as.example.test');
  await conn.start();
  assert.notEqual(conn.state, 'ready');
  assert.match(conn.reason ?? '', /bound to authorization server https:\/\/as\.example\.test/);
  assert.equal(e.exchanges.length, 0, 'the IdP was never asked');
  assert.deepEqual(e.grants, [], 'no token request');
  await conn.close();
});

test('cross_app_access: a refused worker token says which credentials to check, not to log in', async () => {
  const e = await startEnterprise();
  const conn = connect(e, { ID: 'id-token-1', KEY: 'wrong-secret' });
  await conn.start();
  assert.notEqual(conn.state, 'ready');
  assert.match(conn.reason ?? '', /MCP server ent refused the worker's own token \(oauth\.cross_app_access\)/);
  assert.doesNotMatch(conn.reason ?? '', /dreact mcp login/, 'a worker token has no login');
  await conn.close();
});
