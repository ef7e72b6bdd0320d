/**
 * What a deployed gateway needs around its routes: a request id on every response and log line
 * (hono/request-id; a caller's `X-Request-Id` is kept when sane), one structured JSON access log
 * line per request (pino), a CORS allow-list (hono/cors; no list, no cross-origin access), rate
 * limits per API key (rate-limiter-flexible; 429 with Retry-After), and body limits per route.
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
