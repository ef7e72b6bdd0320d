/**
 * A real OAuth 2.1-protected MCP server on loopback for tests, built from the MCP SDK's own server
 * pieces: `mcpAuthRouter` (authorization-server metadata, protected-resource metadata, dynamic
 * client registration, /authorize with PKCE, /token with refresh, revocation) over an in-process
 * authorization server provider in the pattern of the SDK's demo provider (it approves every
 * authorization request at once — the test plays the browser by following the redirect), and the
 * Streamable HTTP MCP server of mcp-servers.ts behind `requireBearerAuth` (scope `mcp:tools`,
 * WWW-Authenticate naming the resource metadata). `expireAccessTokens()` ends every access token
 * issued so far (the next request answers 401 and the client must refresh).
 */
import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthServerProvider, AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildMcpServer } from './mcp-servers';

export const OAUTH_SCOPE = 'mcp:tools';

interface Issued {
  clientId: string;
  scopes: string[];
  expiresAt: number;
  resource?: URL;
}

class TestAuthorizationServer implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly codes = new Map<string, { client: OAuthClientInformationFull; params: AuthorizationParams }>();
  readonly access = new Map<string, Issued>();
  readonly refresh = new Map<string, Issued>();
  /** Counts: clients registered, codes exchanged, refreshes. */
  readonly counts = { registered: 0, exchanged: 0, refreshed: 0 };
  /** Every access and refresh token issued (to look for them where they must not be). */
  readonly issued: string[] = [];
  /** Scopes each authorization request asked for, in order. */
  readonly requestedScopes: string[][] = [];

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (id) => this.clients.get(id),
      registerClient: (client) => {
        const full = client as OAuthClientInformationFull;
        this.counts.registered++;
        this.clients.set(full.client_id, full);
        return full;
      },
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const code = randomUUID();
    this.codes.set(code, { client, params });
    this.requestedScopes.push(params.scopes ?? []);
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const c = this.codes.get(code);
    if (!c) throw new Error('unknown authorization code');
    return c.params.codeChallenge;
  }

  private issue(clientId: string, scopes: string[], resource?: URL): OAuthTokens {
    const token = `at_${randomUUID()}`;
    const refresh = `rt_${randomUUID()}`;
    const grant = { clientId, scopes, expiresAt: Date.now() + 3_600_000, ...(resource ? { resource } : {}) };
    this.access.set(token, grant);
    this.refresh.set(refresh, grant);
    this.issued.push(token, refresh);
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const c = this.codes.get(code);
    if (!c || c.client.client_id !== client.client_id) throw new Error('authorization code not issued to this client');
    this.codes.delete(code);
    this.counts.exchanged++;
    return this.issue(client.client_id, c.params.scopes ?? [], c.params.resource);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const grant = this.refresh.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new Error('unknown refresh token');
    this.refresh.delete(refreshToken);
    this.counts.refreshed++;
    return this.issue(client.client_id, grant.scopes, grant.resource);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.access.get(token);
    // InvalidTokenError: the bearer middleware answers 401 with WWW-Authenticate (any other error is a 500).
    if (!grant || grant.expiresAt < Date.now()) throw new InvalidTokenError('invalid or expired token');
    return {
      token,
      clientId: grant.clientId,
      scopes: grant.scopes,
      expiresAt: Math.floor(grant.expiresAt / 1000),
      ...(grant.resource ? { resource: grant.resource } : {}),
    };
  }
}

export interface OAuthMcpServer {
  /** The MCP endpoint (`/mcp`). */
  url: string;
  port: number;
  as: TestAuthorizationServer;
  /** Tool calls that reached the MCP server (past the bearer check). */
  calls: string[];
  /** Every access token issued so far stops being valid (refresh tokens stay). */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

export async function startOAuthMcpServer(): Promise<OAuthMcpServer> {
  const as = new TestAuthorizationServer();
  const calls: string[] = [];
  const app = express();
  const http: HttpServer = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (http.address() as AddressInfo).port;
  const base = new URL(`http://127.0.0.1:${port}/`);
  const mcpUrl = new URL('/mcp', base);
  app.use(
    mcpAuthRouter({
      provider: as,
      issuerUrl: base,
      resourceServerUrl: mcpUrl,
      scopesSupported: [OAUTH_SCOPE],
      resourceName: 'dreact test MCP server',
    }),
  );
  const bearer = requireBearerAuth({
    verifier: as,
    requiredScopes: [OAUTH_SCOPE],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  app.all('/mcp', bearer, (req, res) => {
    void (async () => {
      const server = buildMcpServer({
        authorized: () => (req as { auth?: unknown }).auth !== undefined,
        onCall: (n) => calls.push(n),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.status(500).end(String(err));
    });
  });
  return {
    url: mcpUrl.href,
    port,
    as,
    calls,
    expireAccessTokens: () => {
      for (const g of as.access.values()) g.expiresAt = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
