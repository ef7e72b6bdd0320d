/**
 * Enterprise-managed authorization for an MCP server (SEP-990, cross-app access;
 * `oauth.cross_app_access` in the agent file): the worker exchanges the enterprise IdP's ID token
 * for an ID-JAG at the IdP (RFC 8693 token exchange, audience the MCP server's authorization server,
 * resource the MCP server), then the ID-JAG for the server's access token with the jwt-bearer grant
 * (RFC 7523) at that authorization server, authenticating there with client_secret_basic.
 *
 * The MCP SDK does the work: its `auth()` discovers the authorization server from the server's
 * protected-resource metadata, authenticates the client and posts the grant this provider's
 * `prepareTokenRequest()` returns (as its ClientCredentialsProvider does for client_credentials),
 * and runs again when the server answers 401. The exchange at the IdP's (configured) token endpoint
 * is the SDK's `fetchToken` with a provider for the token-exchange grant (client auth `none`:
 * `client_id`), a fresh ID-JAG for each access token.
 * Every token (ID token, ID-JAG, access token) stays in the worker's memory: never stored, logged or
 * put in history; one access token for every tenant's turns.
 */
import {
  fetchToken,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { z } from 'zod';
import { substituteSecrets, type McpCrossAppAccessSchema } from '../../core/mcp/config';

type CrossAppAccess = z.infer<typeof McpCrossAppAccessSchema>;

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

const stripSlash = (u: string) => u.replace(/\/+$/, '');

/** What every non-interactive provider answers the same way (no redirect, no PKCE). */
abstract class NonInteractive {
  get redirectUrl(): undefined {
    return undefined;
  }
  redirectToAuthorization(): never {
    throw new Error('no browser login: the worker gets its own token');
  }
  saveCodeVerifier(): void {}
  codeVerifier(): never {
    throw new Error('no authorization code flow: the worker gets its own token');
  }
}

/** The token-exchange request at the IdP: the ID token for an ID-JAG, for one audience and resource. */
class TokenExchange extends NonInteractive implements OAuthClientProvider {
  readonly clientMetadata: OAuthClientMetadata;
  constructor(
    private readonly clientId: string,
    private readonly params: Record<string, string>,
    scope: string | undefined,
  ) {
    super();
    this.clientMetadata = { redirect_uris: [], grant_types: [TOKEN_EXCHANGE_GRANT], ...(scope ? { scope } : {}) };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.clientId };
  }
  tokens(): undefined {
    return undefined;
  }
  saveTokens(): void {}
  prepareTokenRequest(scope?: string): URLSearchParams {
    const p = new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, ...this.params });
    if (scope) p.set('scope', scope);
    return p;
  }
}

export class CrossAppAccessProvider extends NonInteractive implements OAuthClientProvider {
  readonly clientMetadata: OAuthClientMetadata;
  private tokenSet: OAuthTokens | undefined;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly xaa: CrossAppAccess,
    private readonly secret: (name: string) => string,
    /** The MCP server's URL: the resource when its metadata names none. */
    private readonly serverUrl: string,
    scopes?: readonly string[],
  ) {
    super();
    this.clientMetadata = {
      client_name: 'durable-react',
      redirect_uris: [],
      grant_types: [JWT_BEARER_GRANT],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(scopes?.length ? { scope: scopes.join(' ') } : {}),
    };
  }

  /** Read when it is presented (an undeclared secret fails the connect, not the worker start). */
  clientInformation(): OAuthClientInformationMixed {
    const { client_id, client_secret, issuer } = this.xaa;
    return { client_id, client_secret: substituteSecrets(client_secret, this.secret), ...(issuer ? { issuer } : {}) };
  }
  tokens(): OAuthTokens | undefined {
    return this.tokenSet;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.tokenSet = tokens;
  }
  invalidateCredentials(): void {
    this.tokenSet = undefined;
  }
  /** `auth()` tells the provider which authorization server and resource it found, before the grant. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  /** The jwt-bearer grant: a fresh ID-JAG from the IdP as its assertion. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const d = this.discovery;
    if (!d) throw new Error('cross_app_access: the authorization server is not discovered yet');
    // The ID-JAG is for the authorization server it is presented to: its issuer is where discovery
    // found it (RFC 8414 §3.3), or the grant goes nowhere.
    const audience = d.authorizationServerMetadata?.issuer ?? d.authorizationServerUrl;
    if (stripSlash(audience) !== stripSlash(d.authorizationServerUrl))
      throw new Error(
        `cross_app_access: the authorization server at ${d.authorizationServerUrl} names issuer ${audience}: no ID-JAG is asked for`,
      );
    const resource = d.resourceMetadata?.resource ?? this.serverUrl;
    const params = new URLSearchParams({
      grant_type: JWT_BEARER_GRANT,
      assertion: await this.idJag(audience, resource, scope),
    });
    if (scope) params.set('scope', scope);
    return params;
  }

  private async idJag(audience: string, resource: string, scope: string | undefined): Promise<string> {
    const url = this.xaa.idp_token_endpoint;
    // Only the token endpoint (and no client authentication methods: `client_id` alone) is read from it.
    const metadata = { issuer: new URL(url).origin, token_endpoint: url } as AuthorizationServerMetadata;
    const exchange = new TokenExchange(
      this.xaa.idp_client_id,
      {
        requested_token_type: ID_JAG_TYPE,
        audience,
        subject_token: substituteSecrets(this.xaa.id_token, this.secret),
        subject_token_type: ID_TOKEN_TYPE,
      },
      scope,
    );
    try {
      const jag = await fetchToken(exchange, url, { metadata, resource });
      return jag.access_token;
    } catch (err) {
      // Not an OAuthError: `auth()` would take an IdP's invalid_grant for the authorization server's and retry.
      throw new Error(`cross_app_access: the IdP refused the token exchange: ${(err as Error).message}`);
    }
  }
}
