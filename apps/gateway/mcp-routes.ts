/**
 * `/mcp`: durable-react as a Streamable HTTP MCP server (apps/mcp-server/server.ts), hybrid. An
 * `initialize` POST opens a session (mcp-sessions.ts: `Mcp-Session-Id`, bound to the API key):
 * requests naming it go to its transport — its `GET` opens the session's SSE stream (resource
 * updates), its `DELETE` ends it, a cancelled `start_turn` cancels its turn — and an id the key
 * does not hold answers 404 (the client initializes again). A POST without a session id that is
 * not `initialize` is served statelessly: one JSON-RPC exchange, answered as JSON or as an SSE
 * stream that carries the request's progress notifications; `GET`/`DELETE` without a session id
 * answer 405. Authenticated like `/v1`: an API key in `x-api-key` or as
 * `Authorization: Bearer <key>` (what MCP clients send), checked by the gateway's own key check,
 * under the SAME rate limits as `/v1` (rate-limits.ts: one failed-auth budget, one budget per key).
 * Its `Host` must name the gateway and a browser's request come from an allowed origin (DNS
 * rebinding: mcp-rebinding.ts) — all of it in front of the sessions too. A JSON-RPC batch costs
 * one point per call, and `start_turn` is refused inside a batch (a turn is started by a request
 * of its own, which its progress and its answer belong to). The body is capped. A key is
 * always needed (the insecure development mode's anonymous reads do not extend to MCP).
 */
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Pool } from 'pg';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { DreactClient } from '../../client/api';
import type { Principal } from '../../core/tenancy/principal';
import type { StreamNotifier } from '../../store/stream-bus';
import { deciderName } from '../../core/governance/approval';
import { createDreactMcpServer } from '../mcp-server/server';
import { McpSessions, sessionNotFound, sessionOwner, type McpSessionLimits } from './mcp-sessions';
import { fail, type GatewayEnv } from './http';
import { silentLogger, type Logger } from './hardening';
import { mcpRebindingGuard } from './mcp-rebinding';
import { presentedKey, type GatewayRateLimits } from './rate-limits';

export interface McpRouteOptions {
  client: DreactClient;
  pool: Pool;
  /** The principal of an API key (undefined: invalid or revoked) — the gateway's key check. */
  principalFor(key: string): Promise<Principal | undefined>;
  notifier?: StreamNotifier;
  /** The gateway's limits, shared with /v1. */
  limits: GatewayRateLimits;
  /** Browser origins allowed (DREACT_CORS_ORIGINS); a request with another Origin is refused. */
  origins: readonly string[];
  /** Host names the gateway is reached by besides loopback (DREACT_GATEWAY_HOSTNAMES); another `Host` is refused. */
  hostnames: readonly string[];
  maxBodyBytes?: number;
  logger?: Logger;
  /** Session caps and idle expiry (mcp-sessions.ts defaults). */
  sessionLimits?: Partial<McpSessionLimits>;
  /** Whether a key still holds (revoked: its sessions close). */
  keyStillActive?: (keyId: string) => Promise<boolean>;
  /** A session's resource updates: one per this many ms of a conversation's burst (default 250). */
  updateCoalesceMs?: number;
}

export const MCP_PATH = '/mcp';

/** A JSON-RPC error answer (HTTP 400) for a request the transport never sees. */
const rpcError = (c: Context, message: string, id: unknown = null) =>
  c.json({ jsonrpc: '2.0', id, error: { code: -32600, message } }, 400);

const isStartTurn = (m: unknown) => {
  const call = m as { method?: unknown; params?: { name?: unknown } } | null;
  return call?.method === 'tools/call' && call.params?.name === 'start_turn';
};

/** Registers `/mcp`; the sessions it returns are closed with the gateway. */
export function registerMcpRoutes(app: Hono<GatewayEnv>, o: McpRouteOptions): McpSessions {
  const base = (principal: Principal) => ({
    client: o.client,
    pool: o.pool,
    principal,
    ...(o.notifier ? { notifier: o.notifier } : {}),
    logger: o.logger ?? silentLogger,
  });
  const sessions = new McpSessions(
    (principal, session) =>
      createDreactMcpServer({
        ...base(principal),
        subscriptions: o.updateCoalesceMs !== undefined ? { coalesceMs: o.updateCoalesceMs } : {},
        // The client's `notifications/cancelled` for a waiting start_turn: the turn ends `cancelled`
        // (as POST …/turns/:n/cancel). A session's own close ends its requests, never their turns.
        cancelTurn: async (conversationId, turnIndex) => {
          if (session.closing()) return;
          await o.client.cancel(conversationId, {
            turnIndex,
            by: deciderName(principal),
            reason: 'the MCP client cancelled its start_turn request',
          });
        },
      }),
    o.sessionLimits,
    o.keyStillActive,
  );
  app.use(MCP_PATH, o.limits.failedAuth);
  app.use(MCP_PATH, mcpRebindingGuard({ hostnames: o.hostnames, origins: o.origins }));
  app.use(MCP_PATH, async (c, next) => {
    const key = presentedKey(c);
    if (!key) return fail(c, 'unauthorized', 'missing API key: send it as x-api-key or Authorization: Bearer');
    const principal = await o.principalFor(key);
    if (!principal) return fail(c, 'unauthorized', 'invalid or revoked API key');
    c.set('principal', principal);
    await next();
  });
  app.use(MCP_PATH, o.limits.perKey);
  app.use(
    MCP_PATH,
    bodyLimit({
      maxSize: o.maxBodyBytes ?? 1024 * 1024,
      onError: (c) => fail(c, 'too_large', 'request body too large'),
    }),
  );
  app.all(MCP_PATH, async (c) => {
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId === undefined && (c.req.method === 'GET' || c.req.method === 'DELETE')) {
      c.header('allow', 'POST');
      return c.json(
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: `Method Not Allowed: without an Mcp-Session-Id this MCP endpoint is stateless (no SSE stream to ${c.req.method === 'GET' ? 'open' : 'end'}); send requests as POST, or initialize a session`,
          },
        },
        405,
      );
    }
    let parsedBody: unknown;
    if (c.req.method === 'POST') {
      try {
        parsedBody = await c.req.json();
      } catch {
        return c.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: not JSON' } }, 400);
      }
      if (Array.isArray(parsedBody)) {
        if (parsedBody.some(isStartTurn))
          return rpcError(c, 'start_turn is refused inside a JSON-RPC batch: send it as a request of its own');
        // The per-key limiter counted this request once; each further call costs a point too.
        const refused = await o.limits.consume(c, parsedBody.length - 1);
        if (refused) return refused;
      }
    }
    const owner = sessionOwner(presentedKey(c)!);
    if (sessionId !== undefined)
      return (await sessions.handle(sessionId, owner, c.req.raw, parsedBody)) ?? sessionNotFound();
    const initialize = Array.isArray(parsedBody)
      ? parsedBody.some(isInitializeRequest)
      : isInitializeRequest(parsedBody);
    if (initialize) return sessions.initialize(c.req.raw, parsedBody, c.get('principal'), owner);
    // Stateless: no session ids; the transport lives for this request only.
    const server = createDreactMcpServer(base(c.get('principal')));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    const res = await transport.handleRequest(c.req.raw, parsedBody === undefined ? {} : { parsedBody });
    return sessions.serveStateless(server, res);
  });
  return sessions;
}
