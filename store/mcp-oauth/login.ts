/**
 * A person's login to an OAuth MCP server, in two steps over the SDK's `auth()` (which discovers the
 * server's protected-resource and authorization-server metadata, registers the client dynamically,
 * makes the PKCE pair and exchanges the code): `startMcpLogin` → the authorization URL to open;
 * `finishMcpLogin` with the code the redirect brought → tokens stored (sealed). Used by
 * `dreact mcp login` (a loopback redirect) and the gateway's connect routes.
 *
 * Both steps first ask the server itself (an unauthenticated `initialize`): its 401 challenge
 * (`WWW-Authenticate`) names where its protected-resource metadata lives and the scope it wants —
 * the login asks for that scope, widened by the scope a worker's call was last refused for
 * (`403 insufficient_scope`: step-up, kept by the provider), else the server's `scopes_supported`,
 * else the agent file's `oauth.scopes`.
 */
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { McpCredentialOwner, McpCredentialStore } from './credentials-store';
import { McpOAuthProvider, type PreRegisteredClient } from './provider';

export interface McpLoginTarget {
  store: McpCredentialStore;
  owner: McpCredentialOwner;
  serverUrl: string;
  scopes?: readonly string[];
  redirectUrl: string;
  /** A client registered beforehand (no dynamic registration); stored sealed for the worker. */
  client?: PreRegisteredClient;
}

function provider(t: McpLoginTarget, state: string | undefined, onUrl: (u: URL) => void) {
  return new McpOAuthProvider({
    store: t.store,
    owner: t.owner,
    serverUrl: t.serverUrl,
    ...(t.scopes ? { scopes: t.scopes } : {}),
    login: { redirectUrl: t.redirectUrl, onAuthorizationUrl: onUrl, ...(state !== undefined ? { state } : {}) },
  });
}

/** The server's own challenge: where its resource metadata is, and the scope it asks for. */
async function challenge(serverUrl: string): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const res = await fetch(serverUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'durable-react', version: '1' },
        },
      }),
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    if (res.status !== 401 && res.status !== 403) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  } catch {
    return {}; // discovery falls back to the well-known locations
  }
}

/** The scope to ask for: the challenge's, widened by a step-up's; else the SDK's own choice. */
async function loginOptions(t: McpLoginTarget) {
  const found = await challenge(t.serverUrl);
  const stepUp = (await t.store.load(t.owner))?.challengeScope;
  const words = new Set([...(found.scope ?? '').split(' '), ...(stepUp ?? '').split(' ')].filter(Boolean));
  return {
    serverUrl: t.serverUrl,
    ...(found.resourceMetadataUrl ? { resourceMetadataUrl: found.resourceMetadataUrl } : {}),
    ...(words.size > 0 ? { scope: [...words].join(' ') } : {}),
  };
}

/** Starts a login (earlier tokens are dropped): the URL the person opens. */
export async function startMcpLogin(t: McpLoginTarget, state: string): Promise<URL> {
  await t.store.forget(t.owner, 'tokens');
  if (t.client) await t.store.saveClient(t.owner, t.serverUrl, { ...t.client, preRegistered: true }, t.redirectUrl);
  const options = await loginOptions(t);
  let url: URL | undefined;
  const result = await auth(
    provider(t, state, (u) => {
      url = u;
    }),
    options,
  );
  if (result !== 'REDIRECT' || !url)
    throw new Error(`MCP server ${t.owner.server}: the authorization server issued tokens without a login (${result})`);
  return url;
}

/** Finishes a login with the authorization code from the redirect: the tokens are stored. */
export async function finishMcpLogin(t: McpLoginTarget, code: string): Promise<void> {
  const options = await loginOptions(t);
  const result = await auth(
    provider(t, undefined, () => {
      throw new Error('the authorization server asked for another login while the code was exchanged');
    }),
    { ...options, authorizationCode: code },
  );
  if (result !== 'AUTHORIZED') throw new Error(`MCP server ${t.owner.server}: the code exchange did not authorise`);
}
