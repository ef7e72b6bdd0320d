/**
 * An MCP server's machine-to-machine OAuth (`oauth.client_credentials` in the agent file): the
 * worker gets its own access token with the client_credentials grant — client_secret_basic or
 * private_key_jwt — through the MCP SDK's own providers (`@modelcontextprotocol/sdk/client/
 * auth-extensions`), which do the discovery, the token request and its renewal on a 401. No person
 * logs in, and the token (held in the worker's memory, never stored, logged or put in history) is
 * the same for every tenant's turns: for servers that trust the deployment, not each user.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { substituteSecrets } from '../../core/mcp/config';
import type { z } from 'zod';
import type { McpClientCredentialsSchema } from '../../core/mcp/config';

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
