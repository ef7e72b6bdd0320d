/**
 * Which network destinations an agent's fetch may reach: pure classification of IP addresses
 * (ipaddr.js) and the operator's allow-list (`DREACT_FETCH_ALLOW_HOSTS`). Everything that is not
 * public unicast is refused — loopback, private, link-local (cloud metadata 169.254.169.254),
 * unique-local, carrier-grade NAT, multicast, unspecified, broadcast, reserved, documentation,
 * benchmarking — and IPv6 forms that embed an IPv4 address are judged by the address they
 * embed (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`);
 * tunnel addresses (6to4 `2002::/16`, Teredo `2001::/32`) are refused whatever they embed.
 * No I/O: the resolver and the connection live in `activities/net/address-guard.ts`.
 */
import ipaddr from 'ipaddr.js';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** Ports a fetch may use without an allow-list entry naming another. */
export const WEB_PORTS: readonly number[] = [80, 443];

const V4_WHAT: Record<string, string> = {
  unspecified: 'unspecified (0.0.0.0/8)',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (100.64.0.0/10)',
  private: 'private',
  reserved: 'reserved (documentation, benchmarking or future use)',
  as112: 'AS112 (reserved)',
  amt: 'AMT relay (reserved)',
};

const V6_WHAT: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique-local (fc00::/7)',
  deprecatedSiteLocal: 'site-local (fec0::/10)',
  discard: 'discard-only (100::/64)',
  benchmarking: 'benchmarking (2001:2::/48)',
  amt: 'AMT relay (reserved)',
  as112v6: 'AS112 (reserved)',
  deprecatedOrchid: 'ORCHID (reserved)',
  orchid2: 'ORCHIDv2 (reserved)',
  droneRemoteIdProtocolEntityTags: 'DRIP (reserved)',
  segmentRouting: 'segment routing (5f00::/16)',
  reserved: 'reserved (documentation or IETF use)',
  '6to4': 'a 6to4 tunnel address (2002::/16)',
  teredo: 'a Teredo tunnel address (2001::/32)',
};

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const p = ip.parts;
  return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
}

function describeV4(ip: ipaddr.IPv4): string | undefined {
  const range = ip.range();
  if (range === 'unicast') return undefined;
  if (ip.toString() === '169.254.169.254') return 'link-local (the cloud metadata service)';
  return V4_WHAT[range] ?? range;
}

/** What an address is when it is not public unicast (a phrase), or undefined when it is public. */
function describe(ip: Ip): string | undefined {
  if (ip.kind() === 'ipv4') return describeV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || (range === 'rfc6052' && v6.match(NAT64_WELL_KNOWN))) {
    const v4 = embeddedV4(v6);
    const inner = describeV4(v4);
    const form = range === 'ipv4Mapped' ? 'IPv4-mapped' : range === 'rfc6145' ? 'IPv4-translated' : 'NAT64';
    return inner === undefined ? undefined : `${form} ${v4.toString()}, which is ${inner}`;
  }
  if (range === 'rfc6052') return 'local-use NAT64 (64:ff9b:1::/48)';
  if (range === '6to4') {
    const p = v6.parts;
    const v4 = new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]);
    return `${V6_WHAT['6to4']} embedding ${v4.toString()}`;
  }
  if (range !== 'unicast') return V6_WHAT[range] ?? range;
  if (v6.parts[0] === 0) return 'reserved (::/8, e.g. IPv4-compatible)';
  if (!v6.match(GLOBAL_UNICAST_V6)) return 'outside global unicast (2000::/3)';
  return undefined;
}

/** Parses an IP literal in any form ipaddr.js reads (decimal, hex, octal, short IPv4; IPv6, brackets). */
export function parseIpLiteral(host: string): Ip | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!ipaddr.isValid(bare)) return undefined;
  return ipaddr.parse(bare);
}

/**
 * Why an address must not be fetched ("127.0.0.1 is loopback"), or undefined when it is public
 * unicast. A string that is no IP address is refused too.
 */
export function addressRefusal(address: string | Ip): string | undefined {
  const ip = typeof address === 'string' ? parseIpLiteral(address) : address;
  if (!ip) return `${String(address)} is not an IP address`;
  const what = describe(ip);
  return what === undefined ? undefined : `${ip.toString()} is ${what}`;
}

// ---------------------------------------------------------------- allow-list

export interface AllowEntry {
  /** The entry as the operator wrote it. */
  text: string;
  /** A host name (exact), a `*.suffix` glob (any name under the suffix), or an address range. */
  match: { kind: 'name'; name: string } | { kind: 'suffix'; suffix: string } | { kind: 'cidr'; range: [Ip, number] };
  /** Ports beyond 80/443 this entry opens: a list, or every port (`:*`). */
  ports: readonly number[] | 'any';
}

export interface FetchAllowList {
  entries: readonly AllowEntry[];
}

export const EMPTY_ALLOW_LIST: FetchAllowList = { entries: [] };

const NAME_RE = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function normaliseName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

function parsePort(text: string, entry: string, source: string): number | 'any' {
  if (text === '*') return 'any';
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 65_535))
    throw new Error(`${source}: entry ${JSON.stringify(entry)} has a bad port ${JSON.stringify(text)}`);
  return n;
}

function parseEntry(text: string, source: string): AllowEntry {
  let hostPart = text;
  let port: number | 'any' | undefined;
  const bracketed = /^\[([^\]]+)\](\/\d+)?(?::([^:]+))?$/.exec(text);
  if (bracketed) {
    hostPart = `${bracketed[1]}${bracketed[2] ?? ''}`;
    if (bracketed[3] !== undefined) port = parsePort(bracketed[3], text, source);
  } else if ((text.match(/:/g) ?? []).length === 1) {
    const at = text.lastIndexOf(':');
    hostPart = text.slice(0, at);
    port = parsePort(text.slice(at + 1), text, source);
  }
  const ports: AllowEntry['ports'] = port === undefined ? [] : port === 'any' ? 'any' : [port];
  if (hostPart.includes('/')) {
    if (!ipaddr.isValidCIDR(hostPart))
      throw new Error(`${source}: entry ${JSON.stringify(text)} is not a valid CIDR range (e.g. 10.0.0.0/8, fd00::/8)`);
    return { text, match: { kind: 'cidr', range: ipaddr.parseCIDR(hostPart) }, ports };
  }
  const ip = parseIpLiteral(hostPart);
  if (ip) return { text, match: { kind: 'cidr', range: [ip, ip.kind() === 'ipv4' ? 32 : 128] }, ports };
  const name = normaliseName(hostPart);
  if (name.startsWith('*.') && NAME_RE.test(name.slice(2)))
    return { text, match: { kind: 'suffix', suffix: name.slice(1) }, ports };
  if (NAME_RE.test(name)) return { text, match: { kind: 'name', name }, ports };
  throw new Error(
    `${source}: entry ${JSON.stringify(text)} is neither a host name, a *.domain glob, an IP address nor a CIDR range`,
  );
}

/**
 * Parses the operator's allow-list: comma-separated host names (`wiki.corp.example`), globs
 * (`*.corp.example`: every name under it, not the domain itself), IP addresses and CIDR ranges
 * (`10.0.0.0/8`, `[fd00::]/8`), each optionally with `:port` (or `:*`) to open a port beyond
 * 80/443. Bad input throws an Error naming `source` (the environment variable).
 */
export function parseAllowList(raw: string | undefined, source = 'DREACT_FETCH_ALLOW_HOSTS'): FetchAllowList {
  const items = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return { entries: items.map((item) => parseEntry(item, source)) };
}

function opensPort(entry: AllowEntry, port: number): boolean {
  return WEB_PORTS.includes(port) || entry.ports === 'any' || entry.ports.includes(port);
}

function nameEntry(list: FetchAllowList, host: string): AllowEntry | undefined {
  const name = normaliseName(host);
  return list.entries.find(
    (e) =>
      (e.match.kind === 'name' && e.match.name === name) ||
      (e.match.kind === 'suffix' && name.endsWith(e.match.suffix)),
  );
}

function rangeEntry(list: FetchAllowList, ip: Ip): AllowEntry | undefined {
  return list.entries.find((e) => {
    if (e.match.kind !== 'cidr') return false;
    const [net, bits] = e.match.range;
    return net.kind() === ip.kind() && ip.match(net, bits);
  });
}

export interface DestinationPolicy {
  allowList: FetchAllowList;
  /** Everything allowed (local development and tests that say so). */
  allowPrivateNetwork?: boolean;
}

/**
 * Judges one destination: the URL's host (a name or an IP literal), its port and every address
 * the host resolved to. Returns the reason to refuse, or undefined when every address may be
 * reached. An allow-listed name accepts whatever it resolves to; otherwise each address must be
 * public unicast or inside an allow-listed range, and the port 80/443 or opened by that entry.
 */
export function destinationRefusal(
  dest: { host: string; port: number; addresses: readonly string[] },
  policy: DestinationPolicy,
): string | undefined {
  if (policy.allowPrivateNetwork) return undefined;
  if (dest.addresses.length === 0) return `${dest.host} resolves to no address`;
  const isLiteral = parseIpLiteral(dest.host) !== undefined;
  const byName = isLiteral ? undefined : nameEntry(policy.allowList, dest.host);
  for (const address of dest.addresses) {
    const ip = parseIpLiteral(address);
    if (!ip) return `${address} is not an IP address`;
    const entry = byName ?? rangeEntry(policy.allowList, ip);
    if (entry) {
      if (!opensPort(entry, dest.port))
        return `port ${dest.port} is not open for ${dest.host} (allow-list entry ${JSON.stringify(entry.text)} opens 80, 443${entry.ports === 'any' ? '' : entry.ports.map((p) => `, ${p}`).join('')})`;
      continue;
    }
    const refusal = addressRefusal(ip);
    if (refusal) return refusal;
    if (!WEB_PORTS.includes(dest.port)) return `port ${dest.port} is not served (only 80 and 443)`;
  }
  return undefined;
}
