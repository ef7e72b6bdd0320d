/**
 * A person's login to an OAuth MCP server, in two steps over the SDK's `auth()` (which discovers the
 * server's protected-resource and authorization-server metadata, registers the client dynamically,
 * makes the PKCE pair and exchanges the code): `startMcpLogin` → the authorization URL to open;
 * `finishMcpLogin` with the code the redirect brought → tokens stored (sealed). Used by
 * `dreact mcp login` (a loopback redirect) and the gateway's connect routes.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { McpCredentialOwner, McpCredentialStore } from './credentials-store';
import { McpOAuthProvider } from './provider';

export interface McpLoginTarget {
  store: McpCredentialStore;
  owner: McpCredentialOwner;
  serverUrl: string;
  scopes?: readonly string[];
  redirectUrl: string;
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

const scopeOf = (t: McpLoginTarget) => (t.scopes?.length ? { scope: t.scopes.join(' ') } : {});

/** Starts a login (earlier tokens are dropped): the URL the person opens. */
export async function startMcpLogin(t: McpLoginTarget, state: string): Promise<URL> {
  await t.store.forget(t.owner, 'tokens');
  let url: URL | undefined;
  const result = await auth(
    provider(t, state, (u) => {
      url = u;
    }),
    { serverUrl: t.serverUrl, ...scopeOf(t) },
  );
  if (result !== 'REDIRECT' || !url)
    throw new Error(`MCP server ${t.owner.server}: the authorization server issued tokens without a login (${result})`);
  return url;
}

/** Finishes a login with the authorization code from the redirect: the tokens are stored. */
export async function finishMcpLogin(t: McpLoginTarget, code: string): Promise<void> {
  const result = await auth(
    provider(t, undefined, () => {
      throw new Error('the authorization server asked for another login while the code was exchanged');
    }),
    { serverUrl: t.serverUrl, authorizationCode: code, ...scopeOf(t) },
  );
  if (result !== 'AUTHORIZED') throw new Error(`MCP server ${t.owner.server}: the code exchange did not authorise`);
}
