/**
 * What a deployed gateway needs around its routes: a request id on every response and log line
 * (hono/request-id; a caller's `X-Request-Id` is kept when sane), one structured JSON access log
 * line per request (pino), a CORS allow-list (hono/cors; no list, no cross-origin access), body
 * limits per route, one value per query parameter, and the security headers of every response.
 * The rate limits (per key, and on failed authentication) live in rate-limits.ts.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { requestId } from 'hono/request-id';
import pino, { type Logger } from 'pino';
import { fail, type GatewayEnv } from './http';

export type { Logger };

/** A logger that writes nothing (the default for an app built in tests). */
export const silentLogger: Logger = pino({ level: 'silent' });

export function requestIds(): MiddlewareHandler {
  return requestId({
    limitLength: 128,
    // Keep the caller's id only when it is a plain token; otherwise make one.
    generator: () => crypto.randomUUID(),
  });
}

export function accessLog(logger: Logger): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const t0 = performance.now();
    await next();
    const p = c.get('principal');
    logger.info({
      requestId: c.get('requestId'),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - t0) * 10) / 10,
      ...(p ? { tenant: p.tenantId, project: p.projectId, key: p.keyId } : {}),
    });
  };
}

export function corsAllowList(origins: readonly string[]): MiddlewareHandler {
  const allowed = new Set(origins);
  return cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    // authorization, mcp-protocol-version, mcp-session-id, last-event-id: what a browser MCP
    // client sends to /mcp (and it reads mcp-session-id back).
    allowHeaders: [
      'x-api-key',
      'authorization',
      'content-type',
      'last-event-id',
      'x-request-id',
      'mcp-protocol-version',
      'mcp-session-id',
    ],
    exposeHeaders: ['x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'mcp-session-id'],
    maxAge: 600,
  });
}

/**
 * A browser's request only from an allowed origin (the CORS allow-list): a request carrying an
 * `Origin` outside it is refused even with a valid key — DNS rebinding (a page of
 * evil.example.com resolved to the gateway's address) sends its own origin. Requests without an
 * `Origin` (non-browser clients) pass. Used by `/mcp` (mcp-rebinding.ts).
 */
export function originRefusal(origins: readonly string[]): (origin: string | undefined) => string | undefined {
  const allowed = new Set(origins);
  return (origin) =>
    origin !== undefined && !allowed.has(origin)
      ? `Origin ${JSON.stringify(origin)} is not allowed (DREACT_CORS_ORIGINS)`
      : undefined;
}

/**
 * Headers on every response: no MIME sniffing (a JSON error or an export is never run as script or
 * HTML) and no Referer (URLs may carry a stream token or conversation ids).
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    await next();
    if (!c.res.headers.has('x-content-type-options')) {
      c.res.headers.set('x-content-type-options', 'nosniff');
      c.res.headers.set('referrer-policy', 'no-referrer');
    }
  };
}

/** One value per query parameter: a repeated one is a 400 naming it (not silently its first value). */
export function singleQueryValues(): MiddlewareHandler {
  return async (c, next) => {
    for (const [name, values] of Object.entries(c.req.queries()))
      if (values.length > 1) return fail(c, 'bad_input', `${name}: repeated query parameter (send it once)`);
    await next();
  };
}

/** Body limit of a route: small for events and edits, larger for turns, the attachment cap for multipart turns. */
export function bodyLimits(limits: { default: number; turn: number; multipartTurn: number; small: number }) {
  const make = (maxSize: number) =>
    bodyLimit({ maxSize, onError: (c: Context) => fail(c, 'too_large', `request body over ${maxSize} bytes`) });
  const byKind = {
    default: make(limits.default),
    turn: make(limits.turn),
    multipartTurn: make(limits.multipartTurn),
    small: make(limits.small),
  };
  return (c: Context, next: () => Promise<void>) => {
    const path = c.req.path;
    const multipart = (c.req.header('content-type') ?? '').toLowerCase().startsWith('multipart/form-data');
    if (c.req.method === 'POST' && /^\/v1\/conversations\/[^/]+\/turns$/.test(path))
      return (multipart ? byKind.multipartTurn : byKind.turn)(c, next);
    if (c.req.method === 'PATCH' || /\/(feedback|stream-token)$/.test(path)) return byKind.small(c, next);
    return byKind.default(c, next);
  };
}
