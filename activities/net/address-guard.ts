/**
 * The one guard in front of every agent-driven fetch (web_fetch in the tool activity and the
 * exec supervisor's proxied web_fetch): checks a URL's scheme, userinfo and port, resolves its
 * host ONCE (every A/AAAA answer; IP literals in any form are parsed, never resolved), judges
 * every address with `core/net/address-policy.ts`, and hands back a target whose connection is
 * pinned to the checked addresses (`pinnedLookup`), so a second DNS answer (rebinding) is never
 * used. Pure with respect to retries: a refusal is final (callers make it non-retryable); a
 * resolution failure is an ordinary error the caller may retry.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { fixturePort } from '../../core/net/fixture-hosts';
import {
  destinationRefusal,
  parseAllowList,
  parseIpLiteral,
  EMPTY_ALLOW_LIST,
  type FetchAllowList,
} from '../../core/net/address-policy';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA). */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every answer, in its order. */
export const systemResolver: HostResolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export interface FetchGuardOptions {
  /** Operator allow-list (default: none — only public unicast on 80/443). */
  allowList?: FetchAllowList;
  /** Skip the address and port checks (local development and tests that say so). */
  allowPrivateNetwork?: boolean;
  /** Injected resolver (tests); default `systemResolver`. */
  resolver?: HostResolver;
}

/** A checked destination: connect to `addresses` only. */
export interface GuardedTarget {
  url: URL;
  /** Host name (or IP literal without brackets) for the Host header and TLS SNI. */
  host: string;
  port: number;
  addresses: ResolvedAddress[];
  /** True when `host` is an IP literal (no resolution, no SNI). */
  literal: boolean;
}

export type GuardResult = { ok: true; target: GuardedTarget } | { ok: false; reason: string };

/** A resolution failure (no such host, DNS down): retryable, unlike a refusal. */
export class HostResolutionError extends Error {
  constructor(host: string, cause: unknown) {
    super(`cannot resolve host ${host}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'HostResolutionError';
  }
}

function defaultPort(url: URL): number {
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Checks a URL and resolves its host; `{ok: false, reason}` names why it is refused
 * ("127.0.0.1 is loopback"). Throws HostResolutionError when the name does not resolve.
 */
export async function guardUrl(url: URL, opts: FetchGuardOptions = {}): Promise<GuardResult> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, reason: `scheme ${url.protocol} is not http or https` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'URLs with credentials are refused' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? defaultPort(url) : Number(url.port);
  const ip = parseIpLiteral(host);
  // A fixture host an eval run in this process serves: exactly its loopback port, plain http, the default port.
  const fixture = fixturePort(host);
  if (fixture !== undefined) {
    if (url.protocol !== 'http:' || url.port !== '')
      return { ok: false, reason: `fixture host ${host} is served on plain http without a port only` };
    return {
      ok: true,
      target: {
        url,
        host: '127.0.0.1',
        port: fixture,
        addresses: [{ address: '127.0.0.1', family: 4 }],
        literal: true,
      },
    };
  }
  let addresses: ResolvedAddress[];
  if (ip) addresses = [{ address: ip.toString(), family: ip.kind() === 'ipv4' ? 4 : 6 }];
  else {
    try {
      addresses = await (opts.resolver ?? systemResolver)(host);
    } catch (err) {
      throw new HostResolutionError(host, err);
    }
  }
  const refusal = destinationRefusal(
    { host, port, addresses: addresses.map((a) => a.address) },
    { allowList: opts.allowList ?? EMPTY_ALLOW_LIST, allowPrivateNetwork: opts.allowPrivateNetwork },
  );
  if (refusal !== undefined) {
    const shown = addresses.map((a) => a.address).join(', ');
    return { ok: false, reason: ip || shown === '' ? refusal : `${refusal} (${host} resolves to ${shown})` };
  }
  return { ok: true, target: { url, host: ip ? ip.toString() : host, port, addresses, literal: ip !== undefined } };
}

/**
 * A `lookup` for net/tls connections that answers with the checked addresses only — never asks
 * DNS again (Node's happy-eyeballs asks with `all: true` and may try each checked address).
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return ((
    _host: string,
    options: { all?: boolean; family?: number | string },
    callback: (...a: unknown[]) => void,
  ) => {
    const fam =
      options?.family === 4 || options?.family === 'IPv4'
        ? 4
        : options?.family === 6 || options?.family === 'IPv6'
          ? 6
          : 0;
    const usable = fam === 0 ? addresses : addresses.filter((a) => a.family === fam);
    if (usable.length === 0) {
      const err = Object.assign(new Error(`no checked IPv${fam} address`), { code: 'ENOTFOUND' });
      callback(err, options?.all ? [] : undefined);
      return;
    }
    if (options?.all)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, usable[0]!.address, usable[0]!.family);
  }) as unknown as LookupFunction;
}

const ALLOW_ENV = 'DREACT_FETCH_ALLOW_HOSTS';
let cached: { raw: string; list: FetchAllowList } | undefined;

/**
 * The operator's allow-list from `DREACT_FETCH_ALLOW_HOSTS`, parsed once per value; bad input
 * throws an Error naming the variable.
 */
export function fetchAllowListFromEnv(env: NodeJS.ProcessEnv = process.env): FetchAllowList {
  const raw = env[ALLOW_ENV] ?? '';
  if (cached?.raw !== raw) cached = { raw, list: parseAllowList(raw, ALLOW_ENV) };
  return cached.list;
}
