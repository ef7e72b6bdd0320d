/**
 * The web chat's "connect" button for an OAuth MCP server (issue 43): `POST
 * /v1/mcp-servers/:server/oauth` (`write` scope; body `{ agent? }`) starts a login for the caller's
 * tenant (and user, when the key has one) and answers `{ server, authorizationUrl }` — the page
 * opens it; the authorization server sends the browser back to `GET /oauth/mcp/callback`, which
 * carries no API key: the login is found by its `state` (128 random bits, single use, stored as a
 * hash), the code is exchanged (PKCE, through the SDK: store/mcp-oauth/login.ts) and the tokens are
 * stored sealed. The worker's connection for that tenant uses them from its next turn. The callback
 * URL is this gateway's own origin as the request reached it (`Host`; a proxy forwards it).
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/api';
import { MCP_SERVER_NAME_RE } from '../../core/mcp/config';
import { McpCredentialStore, type McpCredentialOwner } from '../../store/mcp-oauth/credentials-store';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';
import { findOAuthServer } from '../../store/mcp-oauth/server-config';
import { finishMcpLogin, startMcpLogin, type McpLoginTarget } from '../../store/mcp-oauth/login';
import { jsonBody, need, type GatewayEnv } from './http';

export const MCP_OAUTH_CALLBACK_PATH = '/oauth/mcp/callback';

const StartSchema = z.strictObject({
  agent: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The agent whose server it is (default: any that declares it).'),
});

const escape = (s: string) => s.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
const page = (c: Context, status: 200 | 400, text: string) =>
  c.html(`<!doctype html><meta charset="utf-8"><title>durable-react</title><p>${escape(text)}</p>`, status);

function store(pool: Pool): McpCredentialStore {
  try {
    return new McpCredentialStore(pool, mcpTokenKey());
  } catch (e) {
    throw new DreactError((e as Error).message, 'failed');
  }
}

async function target(
  pool: Pool,
  owner: McpCredentialOwner,
  redirectUrl: string,
  agent?: string,
): Promise<McpLoginTarget> {
  const found = await findOAuthServer(pool, owner.server, agent).catch((e: Error) => {
    throw new DreactError(e.message, 'not_found');
  });
  return {
    store: store(pool),
    owner,
    serverUrl: found.url,
    ...(found.scopes ? { scopes: found.scopes } : {}),
    redirectUrl,
  };
}

export function registerMcpOAuthRoutes(app: Hono<GatewayEnv>, pool: Pool): void {
  const callbackUrl = (c: Context) => new URL(MCP_OAUTH_CALLBACK_PATH, c.req.url).href;

  app.post('/v1/mcp-servers/:server/oauth', async (c) => {
    const principal = need(c, 'write');
    const server = c.req.param('server');
    if (!MCP_SERVER_NAME_RE.test(server))
      throw new DreactError(`server: ${JSON.stringify(server)} is not an MCP server name`, 'bad_input');
    const body = c.req.header('content-length') === '0' ? {} : await jsonBody(c, StartSchema);
    const owner = { tenantId: principal.tenantId, userId: principal.userId, server };
    const t = await target(pool, owner, callbackUrl(c), body.agent);
    const state = randomBytes(16).toString('base64url');
    const url = await startMcpLogin(t, state).catch((e: Error) => {
      throw new DreactError(`MCP server ${server}: ${e.message}`, 'failed');
    });
    return c.json({ server, authorizationUrl: url.href });
  });

  app.get(MCP_OAUTH_CALLBACK_PATH, async (c) => {
    const state = c.req.query('state');
    const owner = state ? await store(pool).ownerOfState(state) : undefined;
    if (!owner) return page(c, 400, 'This link is not for a login under way (start it again from the chat).');
    const error = c.req.query('error');
    const code = c.req.query('code');
    const s = store(pool);
    if (error || !code) {
      await s.forget(owner, 'verifier');
      return page(c, 400, `Authorisation of MCP server ${owner.server} refused: ${error ?? 'no code'}.`);
    }
    // Single use: the pending login ends here, whatever the exchange answers.
    const t = await target(pool, owner, callbackUrl(c));
    try {
      await finishMcpLogin(t, code);
    } catch (e) {
      await s.forget(owner, 'verifier');
      return page(c, 400, `MCP server ${owner.server}: the code exchange failed (${(e as Error).message}).`);
    }
    return page(c, 200, `MCP server ${owner.server} is connected: you can close this tab and go back to the chat.`);
  });
}
