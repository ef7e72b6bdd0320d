/**
 * The MCP SDK's `OAuthClientProvider` over Postgres (credentials-store.ts): the SDK's `auth()` does
 * the protocol — protected-resource and authorization-server metadata discovery, dynamic client
 * registration, PKCE, the code exchange and token refresh — and this provider only keeps what it
 * hands over, sealed, for one tenant (and user) and server.
 *
 * Two modes. A **login** (`dreact mcp login`, the gateway's connect route) has a redirect URL and
 * receives the authorization URL to show the person. The **worker** has no person to ask: with no
 * stored client or when the SDK would send someone to authorize, it throws `McpNeedsLoginError`
 * (the connection turns it into "MCP server X needs authorisation: dreact mcp login X", and does not
 * retry); with stored tokens it connects, and the SDK refreshes them when the server answers 401.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpCredentialOwner, McpCredentialStore } from './credentials-store';

/** The server needs a person to authorize this client: no retry helps. */
export class McpNeedsLoginError extends Error {
  override name = 'McpNeedsLoginError';
  /** `message`: another wording (a worker-token server: no person logs in for it). */
  constructor(
    readonly server: string,
    message?: string,
  ) {
    super(message ?? `MCP server ${server} needs authorisation: dreact mcp login ${server}`);
  }
}

export const needsLoginMessage = (server: string) => new McpNeedsLoginError(server).message;

export interface McpLogin {
  /** Where the authorization server sends the browser back (a loopback port, the gateway's callback). */
  redirectUrl: string;
  /** The URL the person opens. */
  onAuthorizationUrl: (url: URL) => void | Promise<void>;
  /** The `state` parameter (the gateway's callback finds the login by it). */
  state?: string;
}

export interface McpOAuthProviderOptions {
  store: McpCredentialStore;
  owner: McpCredentialOwner;
  serverUrl: string;
  /** Scopes the agent file asks for (space-joined into the client metadata's `scope`). */
  scopes?: readonly string[];
  login?: McpLogin;
  /**
   * The HTTPS URL of this deployment's OAuth client metadata document (`DREACT_MCP_CLIENT_METADATA_URL`):
   * used as the client id where the authorization server supports client ID metadata documents.
   */
  clientMetadataUrl?: string;
}

/** A client registered with the authorization server beforehand (`dreact mcp login --client-id`). */
export interface PreRegisteredClient {
  client_id: string;
  client_secret?: string;
}

const LOOPBACK_PLACEHOLDER = 'http://127.0.0.1/callback';

export class McpOAuthProvider implements OAuthClientProvider {
  private discovery: OAuthDiscoveryState | undefined;
  private row: Awaited<ReturnType<McpCredentialStore['load']>>;

  constructor(private readonly opts: McpOAuthProviderOptions) {}

  /** The row as stored now (read at every use: a login in another process may have written it). */
  private async stored() {
    this.row = await this.opts.store.load(this.opts.owner);
    return this.row;
  }

  get clientMetadataUrl(): string | undefined {
    return this.opts.clientMetadataUrl ?? process.env.DREACT_MCP_CLIENT_METADATA_URL ?? undefined;
  }

  get redirectUrl(): string {
    return this.opts.login?.redirectUrl ?? this.row?.redirectUrl ?? LOOPBACK_PLACEHOLDER;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'durable-react',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(this.opts.scopes?.length ? { scope: this.opts.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    return this.opts.login?.state ?? '';
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const row = await this.stored();
    const info = row?.clientInfo as (OAuthClientInformationMixed & { redirect_uris?: string[] }) | undefined;
    if (!this.opts.login) {
      // The worker never registers a client: that belongs to a login.
      if (!info) throw new McpNeedsLoginError(this.opts.owner.server);
      return info;
    }
    // A login from another redirect URL (another loopback port, the gateway) registers again — a
    // client registered beforehand keeps its id (its redirect URLs are the registrar's business).
    if (info && info.client_id && (info as { preRegistered?: boolean }).preRegistered) return info;
    if (info && row?.redirectUrl !== this.opts.login.redirectUrl) return undefined;
    return info;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    await this.opts.store.saveClient(
      this.opts.owner,
      this.opts.serverUrl,
      info,
      this.opts.login?.redirectUrl ?? this.row?.redirectUrl,
    );
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.stored())?.tokens as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.opts.store.saveTokens(this.opts.owner, this.opts.serverUrl, tokens);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.opts.login) {
      // A worker cannot send a person there. A wider scope than the login got (a step-up
      // challenge: 403 insufficient_scope) is kept, so the next login asks for it.
      const scope = url.searchParams.get('scope');
      if (scope) await this.opts.store.saveChallengeScope(this.opts.owner, this.opts.serverUrl, scope);
      throw new McpNeedsLoginError(this.opts.owner.server);
    }
    await this.opts.login.onAuthorizationUrl(url);
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    await this.opts.store.saveVerifier(this.opts.owner, this.opts.serverUrl, verifier, this.opts.login?.state);
  }

  async codeVerifier(): Promise<string> {
    const v = (await this.stored())?.verifier;
    if (!v) throw new Error(`no login is pending for MCP server ${this.opts.owner.server} (start it again)`);
    return v;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'discovery') this.discovery = undefined;
    else await this.opts.store.forget(this.opts.owner, scope);
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}
