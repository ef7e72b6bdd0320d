/**
 * The gateway's rate limits, ONE set for every authenticated surface (`/v1` and `/mcp` share them,
 * so a key's budget and a guesser's budget are the same wherever it calls):
 *
 * - **Failed authentication per client address, treated by key prefix.** Every 401 costs the
 *   client's address a point, and once its budget is spent every failure from it is a 429 — so
 *   guessing keys meets 429 whatever key it tries. What is refused BEFORE any check depends on the
 *   key's prefix: a key of ours (`drk_<id>_…`: a 256-bit secret) and a stream token (signed) are
 *   still checked and pass when valid — so other clients' failures never refuse a valid key, even
 *   when every user shares the TLS proxy's address; so is a DREACT_API_KEYS key of 32 characters or
 *   more (`STRONG_KEY_CHARS`) — while a shorter key (which may be weak, or something malformed) and
 *   a missing key get 429 without a check (guessing them stays limited per address).
 * - **Requests per key** (per stream token for streams opened with one); a JSON-RPC batch on
 *   `/mcp` costs one point per call (`consume`).
 *
 * The client address is the connection's peer, or — when the peer is one of the trusted proxies
 * (DREACT_TRUSTED_PROXIES) — the address they forwarded (core/net/trusted-proxies.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { parseApiKey } from '../../core/tenancy/keys';
import { clientAddressOf, type TrustedProxies } from '../../core/net/trusted-proxies';
import { fail, type GatewayEnv } from './http';

export interface RateLimitOptions {
  /** Requests per key per window, and failed authentications per client address (default 600). */
  points?: number;
  /** Window in seconds (default 60). */
  windowSeconds?: number;
  /** Proxies whose X-Forwarded-For names the client (default none: the peer is the client). */
  trustedProxies?: TrustedProxies;
}

export interface GatewayRateLimits {
  /** Before authentication: refuses a spent address (a guessable credential only); counts every 401. */
  failedAuth: MiddlewareHandler<GatewayEnv>;
  /** After authentication: one point per request of the caller's key. */
  perKey: MiddlewareHandler<GatewayEnv>;
  /** `extra` more points of the caller's key (a batch's further calls); a 429 response when spent. */
  consume(c: Context<GatewayEnv>, extra: number): Promise<Response | undefined>;
  /** The client address the limits use (logged, tested). */
  address(c: Context): string;
}

/** The API key a request presents: `x-api-key`, else `Authorization: Bearer` (what MCP clients send). */
export function presentedKey(c: Context): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
  return c.req.header('x-api-key') ?? bearer;
}

/**
 * A presented key this long is checked even from a spent address: a static key (DREACT_API_KEYS)
 * of 32 characters or more cannot be guessed, and a guess of that length can match no shorter key.
 */
export const STRONG_KEY_CHARS = 32;

/** Whether the request's credential is one nobody can guess: a key of ours, a strong key, or a stream token. */
function unguessable(c: Context): boolean {
  const key = presentedKey(c);
  if (key === undefined) return c.req.query('token') !== undefined;
  return parseApiKey(key) !== undefined || key.length >= STRONG_KEY_CHARS;
}

const retryIn = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * `points` per bucket per window, with the headers of the per-key limit: `x-ratelimit-*`, and a
 * 429 with `Retry-After` once spent (`what` names the bucket in the message: "per key", "per
 * hook"). The per-key limit below is one; webhooks have one per hook (apps/gateway/hooks/).
 */
export function bucketLimit(opts: {
  points: number;
  windowSeconds: number;
  what: string;
}): (c: Context, bucket: string, n?: number) => Promise<Response | undefined> {
  const limiter = new RateLimiterMemory({ points: opts.points, duration: opts.windowSeconds });
  return async (c, bucket, n = 1) => {
    try {
      const res = await limiter.consume(bucket, n);
      c.header('x-ratelimit-limit', String(opts.points));
      c.header('x-ratelimit-remaining', String(res.remainingPoints));
      return undefined;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const seconds = retryIn(err.msBeforeNext);
      c.header('retry-after', String(seconds));
      c.header('x-ratelimit-limit', String(opts.points));
      c.header('x-ratelimit-remaining', '0');
      return fail(
        c,
        'rate_limited',
        `rate limit of ${opts.points} requests ${opts.what} exceeded; retry in ${seconds} s`,
      );
    }
  };
}

export function createRateLimits(opts: RateLimitOptions = {}): GatewayRateLimits {
  const points = opts.points ?? 600;
  const duration = opts.windowSeconds ?? 60;
  const proxies = opts.trustedProxies ?? [];
  const failures = new RateLimiterMemory({ points, duration });

  const address = (c: Context): string => {
    const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
    const peer = env?.incoming?.socket?.remoteAddress;
    // No socket: an app driven in-process (tests) — one shared address.
    if (!peer) return 'unknown';
    return clientAddressOf(peer, c.req.header('x-forwarded-for'), proxies);
  };

  const tooManyFailures = (c: Context, msBeforeNext: number) => {
    const seconds = retryIn(msBeforeNext);
    const res = fail(c, 'rate_limited', `too many requests with a missing or invalid key; retry in ${seconds} s`);
    res.headers.set('retry-after', String(seconds));
    return res;
  };

  const failedAuth: MiddlewareHandler<GatewayEnv> = async (c, next) => {
    const bucket = address(c);
    const spent = await failures.get(bucket);
    const exhausted = spent !== null && spent.consumedPoints >= points;
    if (exhausted && !unguessable(c)) return tooManyFailures(c, spent.msBeforeNext);
    await next();
    if (c.res.status !== 401) return;
    if (exhausted) {
      c.res = tooManyFailures(c, spent.msBeforeNext); // in place of the 401
      return;
    }
    await failures.consume(bucket).catch((err: unknown) => {
      if (!(err instanceof RateLimiterRes)) throw err;
    });
  };

  const keyOf = (c: Context<GatewayEnv>) =>
    // A stream opened with a token (no key yet: the route verifies it) counts against that token.
    c.get('principal')?.keyId ?? `token:${(c.req.query('token') ?? '').slice(-43)}`;

  const perKeyLimit = bucketLimit({ points, windowSeconds: duration, what: 'per key' });
  const spend = (c: Context<GatewayEnv>, n: number): Promise<Response | undefined> => perKeyLimit(c, keyOf(c), n);

  const perKey: MiddlewareHandler<GatewayEnv> = async (c, next) => {
    const refused = await spend(c, 1);
    if (refused) return refused;
    await next();
  };

  return {
    failedAuth,
    perKey,
    consume: (c, extra) => (extra > 0 ? spend(c, extra) : Promise.resolve(undefined)),
    address,
  };
}
