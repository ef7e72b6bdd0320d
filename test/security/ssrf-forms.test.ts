/**
 * Security suite, SSRF: property tests over address spellings. Whatever way an IPv4 address is
 * written in a URL (dotted, decimal, hex, octal, IPv4-mapped, -translated, NAT64 IPv6), the guard
 * reaches the same verdict as for the plain address; tunnel and IPv4-compatible forms are refused.
 * No network: IP literals are never resolved and nothing is fetched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { guardUrl } from '../../activities/net/address-guard';
import { addressRefusal } from '../../core/net/address-policy';

const NO_DNS = async (host: string): Promise<never> => {
  throw new Error(`resolver called for ${host}`);
};

const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
/** Mostly addresses from the ranges an attacker wants, some random ones. */
const interesting = fc.oneof(
  octets.map(([, b, c, d]) => [127, b, c, d]),
  octets.map(([, b, c, d]) => [10, b, c, d]),
  octets.map(([, , c, d]) => [169, 254, c, d]),
  octets.map(([, b, c, d]) => [172, 16 + (b % 16), c, d]),
  octets.map(([, , c, d]) => [192, 168, c, d]),
  octets.map(([, b, c, d]) => [100, 64 + (b % 64), c, d]),
  octets.map(([, b, c, d]) => [0, b, c, d]),
  octets.map(([a, b, c, d]) => [224 + (a % 32), b, c, d]),
  octets,
);

function spellings([a, b, c, d]: number[]): string[] {
  const n = ((a! << 24) >>> 0) + (b! << 16) + (c! << 8) + d!;
  const hex = (x: number): string => x.toString(16);
  const h1 = hex((a! << 8) | b!);
  const h2 = hex((c! << 8) | d!);
  return [
    `${a}.${b}.${c}.${d}`,
    String(n),
    `0x${n.toString(16)}`,
    [a, b, c, d].map((x) => `0${x!.toString(8)}`).join('.'),
    `${a}.${(b! << 16) + (c! << 8) + d!}`,
    `[::ffff:${a}.${b}.${c}.${d}]`,
    `[::ffff:${h1}:${h2}]`,
    `[::ffff:0:${h1}:${h2}]`,
    `[64:ff9b::${h1}:${h2}]`,
  ];
}

test('every URL spelling of an IPv4 address gets the verdict of the address itself', async () => {
  await fc.assert(
    fc.asyncProperty(interesting, async (parts) => {
      const plain = addressRefusal(parts.join('.'));
      for (const host of spellings(parts)) {
        const verdict = await guardUrl(new URL(`http://${host}/`), { resolver: NO_DNS });
        assert.equal(verdict.ok, plain === undefined, `${host}: ${verdict.ok ? 'allowed' : verdict.reason}`);
      }
    }),
    { numRuns: 300 },
  );
});

test('6to4, Teredo and IPv4-compatible spellings are refused whatever they embed', async () => {
  await fc.assert(
    fc.asyncProperty(octets, fc.nat(0xffff), async ([a, b, c, d], tail) => {
      const h1 = ((a << 8) | b).toString(16);
      const h2 = ((c << 8) | d).toString(16);
      for (const host of [`[2002:${h1}:${h2}::${tail.toString(16)}]`, `[2001:0:${h1}:${h2}::1]`, `[::${h1}:${h2}]`]) {
        const verdict = await guardUrl(new URL(`http://${host}/`), { resolver: NO_DNS });
        assert.equal(verdict.ok, false, host);
      }
    }),
    { numRuns: 200 },
  );
});
