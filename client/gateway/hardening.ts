/**
 * What a deployed gateway needs around its routes: a request id on every response and log line
 * (hono/request-id; a caller's `X-Request-Id` is kept when sane), one structured JSON access log
 * line per request (pino), a CORS allow-list (hono/cors; no list, no cross-origin access), rate
 * limits per API key (rate-limiter-flexible; 429 with Retry-After) and on failed authentication per
 * client address (before any key is looked up), body limits per route, one value per query
 * parameter, and the security headers of every response.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { requestId } from 'hono/request-id';
import pino, { type Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
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
    allowHeaders: ['x-api-key', 'content-type', 'last-event-id', 'x-request-id'],
    exposeHeaders: ['x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining'],
    maxAge: 600,
  });
}

export interface RateLimitOptions {
  /** Requests per key per window (default 600). */
  points?: number;
  /** Window in seconds (default 60). */
  windowSeconds?: number;
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

/** The peer address of the connection (behind a proxy: the proxy's); 'unknown' without a socket (tests). */
export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/**
 * Failed authentication per client address: every 401 (missing, malformed, unknown, revoked or
 * wrong key, or a bad stream token) costs a point, and an address out of points gets 429 before
 * its key is even looked up — so guessing keys is as limited as using one. Valid keys are limited
 * per key by rateLimitPerKey.
 */
export function rateLimitFailedAuth(opts: RateLimitOptions = {}): MiddlewareHandler<GatewayEnv> {
  const points = opts.points ?? 600;
  const limiter = new RateLimiterMemory({ points, duration: opts.windowSeconds ?? 60 });
  return async (c, next) => {
    const address = clientAddress(c);
    const spent = await limiter.get(address);
    if (spent && spent.consumedPoints >= points) {
      const seconds = Math.max(1, Math.ceil(spent.msBeforeNext / 1000));
      c.header('retry-after', String(seconds));
      return fail(c, 'rate_limited', `too many requests with a missing or invalid key; retry in ${seconds} s`);
    }
    await next();
    if (c.res.status === 401)
      await limiter.consume(address).catch((err: unknown) => {
        if (!(err instanceof RateLimiterRes)) throw err;
      });
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

/** Per API key (anonymous callers share one bucket, stream tokens count per token); runs after authentication. */
export function rateLimitPerKey(opts: RateLimitOptions = {}): MiddlewareHandler<GatewayEnv> {
  const points = opts.points ?? 600;
  const limiter = new RateLimiterMemory({ points, duration: opts.windowSeconds ?? 60 });
  return async (c, next) => {
    // A stream opened with a token (no key yet: the route verifies it) counts against that token.
    const key = c.get('principal')?.keyId ?? `token:${(c.req.query('token') ?? '').slice(-43)}`;
    try {
      const res = await limiter.consume(key);
      c.header('x-ratelimit-limit', String(points));
      c.header('x-ratelimit-remaining', String(res.remainingPoints));
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      c.header('retry-after', String(seconds));
      c.header('x-ratelimit-limit', String(points));
      c.header('x-ratelimit-remaining', '0');
      return fail(c, 'rate_limited', `rate limit of ${points} requests per key exceeded; retry in ${seconds} s`);
    }
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
