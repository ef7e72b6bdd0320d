/**
 * An MCP server's machine-to-machine OAuth (`oauth.client_credentials` in the agent file): the
 * worker gets its own access token with the client_credentials grant — client_secret_basic or
 * private_key_jwt — through the MCP SDK's own providers (`@modelcontextprotocol/sdk/client/
 * auth-extensions`), which do the discovery, the token request and its renewal on a 401. No person
 * logs in, and the token (held in the worker's memory, never stored, logged or put in history) is
 * the same for every tenant's turns: for servers that trust the deployment, not each user.
 * `oauth.cross_app_access` (enterprise-managed authorization, SEP-990) is the same kind of token,
 * got through the enterprise IdP (activities/mcp/cross-app-auth.ts).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { oauthOf, substituteSecrets, type McpServerConfig } from '../../core/mcp/config';
import type { z } from 'zod';
import type { McpClientCredentialsSchema } from '../../core/mcp/config';
import { CrossAppAccessProvider } from './cross-app-auth';

type ClientCredentials = z.infer<typeof McpClientCredentialsSchema>;

export function machineAuthProvider(
  cc: ClientCredentials,
  secret: (name: string) => string,
  scopes?: readonly string[],
): OAuthClientProvider {
  const common = {
    clientId: cc.client_id,
    clientName: 'durable-react',
    ...(scopes?.length ? { scope: scopes.join(' ') } : {}),
    ...(cc.issuer ? { expectedIssuer: cc.issuer } : {}),
  };
  if (cc.private_key !== undefined)
    return new PrivateKeyJwtProvider({
      ...common,
      privateKey: substituteSecrets(cc.private_key, secret),
      algorithm: cc.algorithm ?? 'ES256',
    });
  return new ClientCredentialsProvider({ ...common, clientSecret: substituteSecrets(cc.client_secret!, secret) });
}

/** The worker's own token provider for a server whose `oauth` says how it gets one; else none. */
export function workerAuthProvider(
  config: McpServerConfig,
  secret: (name: string) => string,
): OAuthClientProvider | undefined {
  const oauth = oauthOf(config);
  if (oauth?.client_credentials) return machineAuthProvider(oauth.client_credentials, secret, oauth.scopes);
  if (oauth?.cross_app_access && 'url' in config)
    return new CrossAppAccessProvider(oauth.cross_app_access, secret, config.url, oauth.scopes);
  return undefined;
}
