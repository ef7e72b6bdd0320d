/**
 * Starts the gateway: the Hono app on a port (@hono/node-server) plus the periodic stream prune.
 * Configuration from the environment:
 *   DREACT_API_KEYS                  comma-separated keys of the local tenant (optional: keys live in
 *                                    Postgres, `dreact keys create`; one of the two is required…)
 *   DREACT_GATEWAY_INSECURE=1        …unless this is set: local dev, anonymous reads only
 *   DREACT_GATEWAY_TOKEN_SECRET      signs stream tokens (set it when several gateways serve one API)
 *   DREACT_CORS_ORIGINS              browser origins allowed to call the API (comma-separated)
 *   DREACT_GATEWAY_HOSTNAMES         host names clients reach the gateway by besides loopback and
 *                                    its listen address (comma-separated): /mcp refuses any other
 *                                    Host header (DNS rebinding)
 *   DREACT_RATE_LIMIT_PER_MINUTE     requests per API key per minute (default 600; 429 + Retry-After),
 *                                    and failed authentications per client address
 *   DREACT_TRUSTED_PROXIES           proxies (CIDRs or addresses, comma-separated) whose
 *                                    X-Forwarded-For names the client; default none (the peer is the client)
 *   DREACT_STREAM_RETENTION_SECONDS  age after which stream events are pruned (default 7 days)
 *   DREACT_GATEWAY_HOST / _PORT      listen address (default port 8787; host 0.0.0.0 with keys,
 *                                    127.0.0.1 in insecure mode so anonymous reads stay on loopback)
 *   DREACT_ALLOW_SCRIPTED=1          clients may choose the scripted test model (tests only; else 403)
 *   DREACT_GATEWAY_MODELS            model ids a client may name (comma-separated; default: none,
 *                                    every turn runs the worker's default model)
 *   DREACT_PUBLIC_TEMPORAL_UI_URL    a Temporal UI the web chat's users may open (else no UI links)
 *   DREACT_HOOK_RATE_LIMIT_PER_MINUTE  deliveries each webhook may start per minute (default 60)
 *   DREACT_GATEWAY_PUBLIC_URL        the gateway's address as webhook senders reach it (hook URLs;
 *                                    default: the address a management request came to)
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createGatewayApp, type GatewayApp, type GatewayOptions } from './app';
import { DEFAULT_STREAM_RETENTION_SECONDS, startStreamPruner, type StreamPruner } from './prune';
import { parseTrustedProxies, type TrustedProxies } from '../../core/net/trusted-proxies';
import { DEFAULT_HOOK_RATE_PER_MINUTE } from './hooks/delivery-route';

export const DEFAULT_GATEWAY_PORT = 8787;

export interface GatewayEnvConfig {
  apiKeys: string[];
  insecure: boolean;
  retentionSeconds: number;
  host: string;
  port: number;
  tokenSecret?: string;
  corsOrigins: string[];
  hostnames: string[];
  rateLimitPerMinute: number;
  trustedProxies: TrustedProxies;
  allowScripted: boolean;
  models: string[];
  publicTemporalUiUrl?: string;
  hookRateLimitPerMinute: number;
  publicUrl?: string;
}

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
const flag = (raw: string | undefined) => raw === '1' || raw === 'true';

function positiveInt(raw: string | undefined, name: string, fallback: number, min = 1): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

export function gatewayConfigFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayEnvConfig {
  const apiKeys = (env.DREACT_API_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const insecure = flag(env.DREACT_GATEWAY_INSECURE);
  return {
    apiKeys,
    insecure,
    retentionSeconds: positiveInt(
      env.DREACT_STREAM_RETENTION_SECONDS,
      'DREACT_STREAM_RETENTION_SECONDS',
      DEFAULT_STREAM_RETENTION_SECONDS,
    ),
    host: env.DREACT_GATEWAY_HOST?.trim() || (insecure ? '127.0.0.1' : '0.0.0.0'),
    ...(env.DREACT_GATEWAY_TOKEN_SECRET ? { tokenSecret: env.DREACT_GATEWAY_TOKEN_SECRET } : {}),
    corsOrigins: (env.DREACT_CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    hostnames: list(env.DREACT_GATEWAY_HOSTNAMES),
    rateLimitPerMinute: positiveInt(env.DREACT_RATE_LIMIT_PER_MINUTE, 'DREACT_RATE_LIMIT_PER_MINUTE', 600),
    trustedProxies: parseTrustedProxies(env.DREACT_TRUSTED_PROXIES),
    port: positiveInt(env.DREACT_GATEWAY_PORT, 'DREACT_GATEWAY_PORT', DEFAULT_GATEWAY_PORT, 0),
    allowScripted: flag(env.DREACT_ALLOW_SCRIPTED),
    models: list(env.DREACT_GATEWAY_MODELS),
    hookRateLimitPerMinute: positiveInt(
      env.DREACT_HOOK_RATE_LIMIT_PER_MINUTE,
      'DREACT_HOOK_RATE_LIMIT_PER_MINUTE',
      DEFAULT_HOOK_RATE_PER_MINUTE,
    ),
    ...(env.DREACT_GATEWAY_PUBLIC_URL?.trim() ? { publicUrl: env.DREACT_GATEWAY_PUBLIC_URL.trim() } : {}),
    ...(env.DREACT_PUBLIC_TEMPORAL_UI_URL?.trim()
      ? { publicTemporalUiUrl: env.DREACT_PUBLIC_TEMPORAL_UI_URL.trim() }
      : {}),
  };
}

export interface StartGatewayOptions extends GatewayOptions {
  port?: number;
  host?: string;
  retentionSeconds?: number;
  pruneIntervalMs?: number;
  log?: (line: string) => void;
}

export interface RunningGateway {
  url: string;
  port: number;
  gateway: GatewayApp;
  pruner: StreamPruner;
  close(): Promise<void>;
}

export async function startGateway(opts: StartGatewayOptions): Promise<RunningGateway> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const host = opts.host ?? '127.0.0.1';
  // The address it listens on names it too (a wildcard names no host).
  const own = ['0.0.0.0', '::', ''].includes(host)
    ? []
    : [host.includes(':') && !host.startsWith('[') ? `[${host}]` : host];
  const gateway = await createGatewayApp({ ...opts, hostnames: [...(opts.hostnames ?? []), ...own] });
  let server: Server;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve(
      { fetch: gateway.fetch, port: opts.port ?? DEFAULT_GATEWAY_PORT, hostname: host },
      resolve,
    ) as Server;
    server.once('error', reject);
  }).catch(async (err: Error) => {
    await gateway.close();
    throw new Error(`gateway could not listen on ${host}:${opts.port ?? DEFAULT_GATEWAY_PORT}: ${err.message}`);
  });
  const pruner = startStreamPruner(opts.pool, {
    retentionSeconds: opts.retentionSeconds ?? DEFAULT_STREAM_RETENTION_SECONDS,
    intervalMs: opts.pruneIntervalMs,
    log,
  });
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    gateway,
    pruner,
    async close() {
      await pruner.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections(); // open SSE streams would keep close() waiting forever
      await closed;
      await gateway.close();
    },
  };
}
