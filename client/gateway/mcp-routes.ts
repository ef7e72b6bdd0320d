/**
 * `/mcp`: durable-react as a Streamable HTTP MCP server (client/mcp/server.ts), stateless — every
 * POST is one JSON-RPC exchange, answered as JSON or as an SSE stream that carries the request's
 * progress notifications. Authenticated like `/v1`: an API key in `x-api-key` or as
 * `Authorization: Bearer <key>` (what MCP clients send), checked by the gateway's own key check;
 * failed authentication and each key's requests are rate-limited as on `/v1`; the body is capped.
 * A key is always needed (the insecure development mode's anonymous reads do not extend to MCP).
 */
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Pool } from 'pg';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { DreactClient } from '../api';
import type { Principal } from '../../core/tenancy/principal';
import type { StreamNotifier } from '../../store/stream-bus';
import { createDreactMcpServer } from '../mcp/server';
import { fail, type GatewayEnv } from './http';
import { rateLimitFailedAuth, rateLimitPerKey } from './hardening';

export interface McpRouteOptions {
  client: DreactClient;
  pool: Pool;
  /** The principal of an API key (undefined: invalid or revoked) — the gateway's key check. */
  principalFor(key: string): Promise<Principal | undefined>;
  notifier?: StreamNotifier;
  rateLimitPerMinute?: number;
  maxBodyBytes?: number;
}

export const MCP_PATH = '/mcp';

export function registerMcpRoutes(app: Hono<GatewayEnv>, o: McpRouteOptions): void {
  const points = o.rateLimitPerMinute ?? 600;
  app.use(MCP_PATH, rateLimitFailedAuth({ points, windowSeconds: 60 }));
  app.use(MCP_PATH, async (c, next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    const key = c.req.header('x-api-key') ?? bearer;
    if (!key) return fail(c, 'unauthorized', 'missing API key: send it as x-api-key or Authorization: Bearer');
    const principal = await o.principalFor(key);
    if (!principal) return fail(c, 'unauthorized', 'invalid or revoked API key');
    c.set('principal', principal);
    await next();
  });
  app.use(MCP_PATH, rateLimitPerKey({ points, windowSeconds: 60 }));
  app.use(
    MCP_PATH,
    bodyLimit({
      maxSize: o.maxBodyBytes ?? 1024 * 1024,
      onError: (c) => fail(c, 'too_large', 'request body too large'),
    }),
  );
  app.all(MCP_PATH, async (c) => {
    const server = createDreactMcpServer({
      client: o.client,
      pool: o.pool,
      principal: c.get('principal'),
      ...(o.notifier ? { notifier: o.notifier } : {}),
    });
    // Stateless: no session ids; the transport lives for this request only.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
}
