/**
 * Which address a request comes from when the gateway sits behind proxies it trusts
 * (`DREACT_TRUSTED_PROXIES`, CIDRs or single addresses, comma-separated). `X-Forwarded-For` is
 * read only when the connection's peer is a trusted proxy, and from the right: each hop a trusted
 * proxy appended is skipped, and the first address no trusted proxy vouches for is the client —
 * so a client cannot choose its own address by sending the header itself (the left-most entries
 * are whatever it wrote). Pure (ipaddr.js).
 */
import ipaddr from 'ipaddr.js';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;
export type TrustedProxies = readonly [Ip, number][];

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`, how Node shows IPv4 peers of a dual-stack socket) as IPv4. */
function normal(ip: Ip): Ip {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function parseAddress(text: string): Ip | undefined {
  const bare = text.trim().replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) ? normal(ipaddr.parse(bare)) : undefined;
}

/** The setting's ranges; a bad entry is an Error naming the setting and the entry. */
export function parseTrustedProxies(raw: string | undefined, setting = 'DREACT_TRUSTED_PROXIES'): TrustedProxies {
  const ranges: [Ip, number][] = [];
  for (const entry of (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    try {
      if (entry.includes('/')) {
        const [ip, bits] = ipaddr.parseCIDR(entry);
        ranges.push([normal(ip), ip.kind() === 'ipv6' && normal(ip).kind() === 'ipv4' ? bits - 96 : bits]);
      } else {
        const ip = parseAddress(entry);
        if (!ip) throw new Error('not an address');
        ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      throw new Error(`${setting}: ${JSON.stringify(entry)} is not an IP address or CIDR range (e.g. 10.0.0.0/8)`);
    }
  }
  return ranges;
}

function trusted(ip: Ip, proxies: TrustedProxies): boolean {
  return proxies.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}

/**
 * The client's address: the peer itself unless it is a trusted proxy, else the right-most
 * `X-Forwarded-For` entry that is not a trusted proxy (all of them trusted: the left-most). An
 * unreadable entry ends the walk at the last address that was read (never a client's free text).
 */
export function clientAddressOf(peer: string, forwardedFor: string | undefined, proxies: TrustedProxies): string {
  const peerIp = parseAddress(peer);
  if (!peerIp || !trusted(peerIp, proxies) || !forwardedFor) return peerIp?.toString() ?? peer;
  let client = peerIp;
  const hops = forwardedFor.split(',').reverse();
  for (const hop of hops) {
    const ip = parseAddress(hop);
    if (!ip) break;
    client = ip;
    if (!trusted(ip, proxies)) break;
  }
  return client.toString();
}
