/**
 * Security suite, SSRF through web_fetch (issue 26, defect 1). Every case names what it attacks.
 * No internet: literal addresses never resolve, names go to an injected resolver, and the only
 * servers are on loopback — each counts its hits, so a refusal is proven to have sent nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebFetchImpl, fetchWebPage, WebToolError, type WebFetchOptions } from '../../activities/tools/web-fetch';
import type { HostResolver } from '../../activities/net/address-guard';
import { parseAllowList } from '../../core/net/address-policy';
import type { ToolContext } from '../../activities/tools/types';

let server: Server;
let port = 0;
const hits: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    const [, target] = /^\/to\?(.*)$/.exec(url) ?? [];
    if (target) {
      res.writeHead(302, { location: decodeURIComponent(target) });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`internal data at ${url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A resolver answering from a table; unknown names fail like NXDOMAIN. Records every question. */
function stubResolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  const fn = async (host: string) => {
    asked.push(host);
    const answers = table[host];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(fn, { asked });
}

const NO_DNS = stubResolver({});

async function refused(url: string, re: RegExp, opts: WebFetchOptions = {}, code = 'blocked_address'): Promise<void> {
  const before = hits.length;
  await assert.rejects(fetchWebPage(url, { resolver: NO_DNS, ...opts }), (err: unknown) => {
    assert.ok(err instanceof WebToolError, String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.retryable, false, 'a refusal is never retried');
    assert.equal(err.name, 'WebToolInputError');
    assert.match(err.message, re);
    return true;
  });
  assert.deepEqual(hits.slice(before), [], `${url} reached the loopback server`);
}

// ------------------------------------------------------------- address forms, no resolution

/** [attack, URL (PORT = the loopback server's), what the refusal must say]. */
const LITERALS: Array<[string, string, RegExp]> = [
  [
    'IPv4-mapped IPv6, dotted (the reported exploit)',
    'http://[::ffff:127.0.0.1]:PORT/',
    /::ffff:7f00:1 is IPv4-mapped 127\.0\.0\.1, which is loopback/,
  ],
  ['IPv4-mapped IPv6, hex', 'http://[::ffff:7f00:1]:PORT/', /IPv4-mapped 127\.0\.0\.1, which is loopback/],
  [
    'IPv4-mapped cloud metadata',
    'http://[::ffff:169.254.169.254]/',
    /IPv4-mapped 169\.254\.169\.254, which is link-local \(the cloud metadata service\)/,
  ],
  ['IPv4-mapped private', 'http://[::ffff:10.0.0.1]/', /IPv4-mapped 10\.0\.0\.1, which is private/],
  [
    'IPv4-translated (::ffff:0:0:0/96)',
    'http://[::ffff:0:7f00:1]:PORT/',
    /IPv4-translated 127\.0\.0\.1, which is loopback/,
  ],
  ['NAT64 well-known prefix to loopback', 'http://[64:ff9b::127.0.0.1]:PORT/', /NAT64 127\.0\.0\.1, which is loopback/],
  ['NAT64 to cloud metadata', 'http://[64:ff9b::a9fe:a9fe]/', /NAT64 169\.254\.169\.254/],
  ['local-use NAT64', 'http://[64:ff9b:1::a00:1]/', /local-use NAT64/],
  [
    '6to4 embedding loopback',
    'http://[2002:7f00:1::1]:PORT/',
    /6to4 tunnel address \(2002::\/16\) embedding 127\.0\.0\.1/,
  ],
  ['Teredo tunnel', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo tunnel address/],
  ['IPv4-compatible IPv6 (::127.0.0.1)', 'http://[::127.0.0.1]:PORT/', /::7f00:1 is reserved \(::\/8/],
  ['decimal IPv4', 'http://2130706433:PORT/', /127\.0\.0\.1 is loopback/],
  ['hex IPv4', 'http://0x7f000001:PORT/', /127\.0\.0\.1 is loopback/],
  ['octal IPv4', 'http://0177.0.0.1:PORT/', /127\.0\.0\.1 is loopback/],
  ['short IPv4 (127.1)', 'http://127.1:PORT/', /127\.0\.0\.1 is loopback/],
  ['mixed hex short IPv4 (0x7f.1)', 'http://0x7f.1:PORT/', /127\.0\.0\.1 is loopback/],
  ['IPv4 with a trailing dot', 'http://127.0.0.1.:PORT/', /127\.0\.0\.1 is loopback/],
  ['another loopback (127.53.0.1)', 'http://127.53.0.1:PORT/', /127\.53\.0\.1 is loopback/],
  ['IPv6 loopback', 'http://[::1]:PORT/', /::1 is loopback/],
  ['IPv6 loopback, long form', 'http://[0:0:0:0:0:0:0:1]:PORT/', /::1 is loopback/],
  ['unspecified 0.0.0.0 (reaches local listeners)', 'http://0.0.0.0:PORT/', /0\.0\.0\.0 is unspecified/],
  ['unspecified as a bare 0', 'http://0:PORT/', /0\.0\.0\.0 is unspecified/],
  ['unspecified IPv6 [::]', 'http://[::]:PORT/', /:: is unspecified/],
  [
    'cloud metadata 169.254.169.254',
    'http://169.254.169.254/latest/meta-data/',
    /link-local \(the cloud metadata service\)/,
  ],
  ['cloud metadata as decimal', 'http://2852039166/latest/meta-data/', /169\.254\.169\.254 is link-local/],
  ['AWS IPv6 metadata (fd00:ec2::254)', 'http://[fd00:ec2::254]/', /unique-local/],
  ['private 10/8', 'http://10.0.0.1/', /10\.0\.0\.1 is private/],
  ['private 172.16/12', 'http://172.31.255.255/', /is private/],
  ['private 192.168/16', 'http://192.168.1.1/', /is private/],
  ['carrier-grade NAT 100.64/10', 'http://100.64.0.1/', /carrier-grade NAT/],
  ['IPv6 link-local', 'http://[fe80::1]/', /fe80::1 is link-local/],
  ['IPv6 unique-local', 'http://[fc00::1]/', /unique-local/],
  ['IPv6 site-local (deprecated)', 'http://[fec0::1]/', /site-local/],
  ['IPv4 multicast', 'http://224.0.0.1/', /multicast/],
  ['IPv6 multicast', 'http://[ff02::1]/', /multicast/],
  ['broadcast', 'http://255.255.255.255/', /broadcast/],
  ['reserved 240/4', 'http://240.0.0.1/', /reserved/],
  ['documentation TEST-NET-1', 'http://192.0.2.1/', /reserved/],
  ['benchmarking 198.18/15', 'http://198.18.0.1/', /reserved/],
  ['IPv6 benchmarking', 'http://[2001:2::1]/', /benchmarking/],
  ['IPv6 documentation', 'http://[2001:db8::1]/', /reserved/],
  ['IPv6 discard-only', 'http://[100::1]/', /discard-only/],
  ['IPv6 outside 2000::/3', 'http://[4000::1]/', /outside global unicast/],
];

for (const [attack, raw, re] of LITERALS) {
  test(`refuses ${attack}: ${raw}`, async () => {
    await refused(raw.replace('PORT', String(port)), re);
    assert.deepEqual(NO_DNS.asked, [], 'an IP literal is never sent to the resolver');
  });
}

// ------------------------------------------------------------- names and DNS

test('refuses a hostname that resolves to loopback (and the trailing-dot spelling of it)', async () => {
  const resolver = stubResolver({ 'internal.test': ['127.0.0.1'], 'internal.test.': ['127.0.0.1'] });
  await refused(
    `http://internal.test:${port}/`,
    /127\.0\.0\.1 is loopback \(internal\.test resolves to 127\.0\.0\.1\)/,
    { resolver },
  );
  await refused(`http://internal.test.:${port}/`, /127\.0\.0\.1 is loopback/, { resolver });
  await refused(`http://INTERNAL.test:${port}/`, /is loopback/, { resolver });
});

test('refuses a name with one public and one private answer, whatever the order', async () => {
  const resolver = stubResolver({
    'mixed.test': ['93.184.215.14', '10.0.0.1'],
    'mixed6.test': ['2606:4700::1111', '::ffff:7f00:1'],
  });
  await refused(
    'http://mixed.test/',
    /10\.0\.0\.1 is private \(mixed\.test resolves to 93\.184\.215\.14, 10\.0\.0\.1\)/,
    { resolver },
  );
  await refused('http://mixed6.test/', /IPv4-mapped 127\.0\.0\.1, which is loopback/, { resolver });
});

test('refuses a name that resolves to the cloud metadata address (metadata.google.internal)', async () => {
  const resolver = stubResolver({ 'metadata.google.internal': ['169.254.169.254'] });
  await refused('http://metadata.google.internal/computeMetadata/v1/', /cloud metadata/, { resolver });
});

test('a name that does not resolve is a retryable network error, not a fetch', async () => {
  await assert.rejects(fetchWebPage('http://nowhere.test/', { resolver: NO_DNS }), (err: unknown) => {
    assert.ok(err instanceof WebToolError);
    assert.deepEqual([err.code, err.retryable], ['network', true]);
    assert.match(err.message, /cannot resolve host nowhere\.test/);
    return true;
  });
});

test('DNS rebinding: the connection goes to the address that was checked; the name is resolved once', async () => {
  // Two loopback servers on one port: 127.0.0.1 plays the public address the check approved,
  // 127.0.0.9 the internal one a rebinding DNS server answers on the next question.
  const internal = createServer((_req, res) => res.end('INTERNAL'));
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.9', resolve));
  const p = (internal.address() as AddressInfo).port;
  const checked = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('checked');
  });
  await new Promise<void>((resolve) => checked.listen(p, '127.0.0.1', resolve));
  try {
    const asked: string[] = [];
    const resolver: HostResolver = async (host) => {
      asked.push(host);
      return [{ address: asked.length === 1 ? '127.0.0.1' : '127.0.0.9', family: 4 }];
    };
    const allowList = parseAllowList(`127.0.0.1/32:${p}`);
    const row = await fetchWebPage(`http://rebind.test:${p}/`, { resolver, allowList });
    assert.equal(row.content, 'checked');
    assert.deepEqual(asked, ['rebind.test'], 'resolved exactly once');
  } finally {
    await new Promise<void>((resolve) => internal.close(() => resolve()));
    checked.closeAllConnections();
    await new Promise<void>((resolve) => checked.close(() => resolve()));
  }
});

// ------------------------------------------------------------- redirects

test('refuses a redirect chain that ends on loopback (every hop is checked)', async () => {
  const resolver = stubResolver({ 'hop.test': ['127.0.0.1'], 'internal.test': ['127.0.0.1'] });
  const allowList = parseAllowList(`hop.test:${port}`);
  const last = encodeURIComponent(`http://[::ffff:127.0.0.1]:${port}/secret`);
  const middle = encodeURIComponent(`http://hop.test:${port}/to?${last}`);
  const before = hits.length;
  await assert.rejects(
    fetchWebPage(`http://hop.test:${port}/to?${middle}`, { resolver, allowList }),
    (err: unknown) => {
      assert.ok(err instanceof WebToolError);
      assert.deepEqual([err.code, err.retryable], ['blocked_address', false]);
      assert.match(
        err.message,
        /refused http:\/\/\[::ffff:7f00:1\]:\d+\/secret: ::ffff:7f00:1 is IPv4-mapped 127\.0\.0\.1/,
      );
      return true;
    },
  );
  assert.equal(hits.slice(before).filter((h) => h === '/secret').length, 0, 'the final hop was never requested');
  assert.equal(hits.slice(before).length, 2, 'the two allowed hops were');
  const toName = encodeURIComponent(`http://internal.test:${port}/secret`);
  await assert.rejects(
    fetchWebPage(`http://hop.test:${port}/to?${toName}`, { resolver, allowList }),
    /refused http:\/\/internal\.test:\d+\/secret: 127\.0\.0\.1 is loopback \(internal\.test resolves to 127\.0\.0\.1\)/,
  );
  assert.ok(!hits.includes('/secret'), 'no hop ever reached /secret');
});

test('refuses a redirect to another scheme (file:, gopher:)', async () => {
  const resolver = stubResolver({ 'hop.test': ['127.0.0.1'] });
  const allowList = parseAllowList(`hop.test:${port}`);
  for (const target of ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO']) {
    await assert.rejects(
      fetchWebPage(`http://hop.test:${port}/to?${encodeURIComponent(target)}`, { resolver, allowList }),
      (err: unknown) =>
        err instanceof WebToolError && err.code === 'bad_url' && /only http and https/.test(err.message),
    );
  }
});

// ------------------------------------------------------------- schemes, credentials, ports

test('refuses non-HTTP(S) schemes', async () => {
  for (const raw of [
    'file:///etc/passwd',
    'ftp://example.com/',
    'gopher://127.0.0.1/',
    'data:text/plain,hi',
    'javascript:alert(1)',
  ])
    await refused(raw, /only http and https/, {}, 'bad_url');
});

test('refuses credentials in the URL, including the user@host confusion trick', async () => {
  const resolver = stubResolver({ 'public.test': ['93.184.215.14'] });
  await refused('http://user:pass@public.test/', /URLs with credentials are refused/, { resolver });
  await refused(`http://public.test@127.0.0.1:${port}/`, /credentials/, { resolver });
});

test('refuses ports other than 80/443 on a public host (internal services on odd ports)', async () => {
  const resolver = stubResolver({ 'public.test': ['93.184.215.14'] });
  await refused('http://public.test:6379/', /port 6379 is not served \(only 80 and 443\)/, { resolver });
  await refused('http://public.test:22/', /port 22 is not served/, { resolver });
});

// ------------------------------------------------------------- the tool's observation

test('the tool returns a refusal as a failed observation naming the URL and the reason, never retried', async () => {
  const saved = process.env.DREACT_WEB_ALLOW_PRIVATE;
  delete process.env.DREACT_WEB_ALLOW_PRIVATE;
  try {
    const impl = createWebFetchImpl({ resolver: NO_DNS, allowList: parseAllowList('') });
    const ctx = { signal: new AbortController().signal } as unknown as ToolContext;
    const obs = await impl.run({ urls: [`http://[::ffff:127.0.0.1]:${port}/api/v1/namespaces`] }, ctx);
    assert.equal(obs.ok, false);
    assert.equal(obs.meta?.code, 'blocked_address');
    assert.match(obs.text, /refused http:\/\/\[::ffff:7f00:1\]:\d+\/api\/v1\/namespaces: .*loopback/);
  } finally {
    if (saved !== undefined) process.env.DREACT_WEB_ALLOW_PRIVATE = saved;
  }
});
