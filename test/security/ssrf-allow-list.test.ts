/**
 * Security suite, SSRF: the operator's allow-list (`DREACT_FETCH_ALLOW_HOSTS`) opens exactly what
 * it names — hosts, globs, ranges, ports — and nothing else; bad values fail loudly, naming the
 * variable. Public addresses stay reachable. No internet: a loopback server and a stub resolver.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebFetchImpl, fetchWebPage, WebToolError } from '../../activities/tools/web-fetch';
import { fetchAllowListFromEnv, type HostResolver } from '../../activities/net/address-guard';
import { addressRefusal, destinationRefusal, parseAllowList } from '../../core/net/address-policy';

let server: Server;
let port = 0;

before(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('intranet page');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const resolver: HostResolver = async (host) => {
  if (/corp\.test\.?$/i.test(host)) return [{ address: '127.0.0.1', family: 4 }];
  throw new Error(`getaddrinfo ENOTFOUND ${host}`);
};

async function blocked(url: string, re: RegExp, allow: string): Promise<void> {
  await assert.rejects(fetchWebPage(url, { resolver, allowList: parseAllowList(allow) }), (err: unknown) => {
    assert.ok(err instanceof WebToolError, String(err));
    assert.deepEqual([err.code, err.retryable], ['blocked_address', false], err.message);
    assert.match(err.message, re);
    return true;
  });
}

test('the default refuses the loopback server that an allow-listed address:port may reach', async () => {
  const url = `http://127.0.0.1:${port}/`;
  await blocked(url, /127\.0\.0\.1 is loopback/, '');
  const row = await fetchWebPage(url, { resolver, allowList: parseAllowList(`127.0.0.1:${port}`) });
  assert.equal(row.content, 'intranet page');
});

test('an allow-list entry without a port does not open odd ports (internal admin ports)', async () => {
  await blocked(
    `http://127.0.0.1:${port}/`,
    /port \d+ is not open for 127\.0\.0\.1 \(allow-list entry "127\.0\.0\.1" opens 80, 443\)/,
    '127.0.0.1',
  );
  await blocked(`http://wiki.corp.test:${port}/`, /port \d+ is not open for wiki\.corp\.test/, 'wiki.corp.test');
});

test('an allow-listed name reaches its private address; an unlisted sibling name does not', async () => {
  const allow = `wiki.corp.test:${port}`;
  const row = await fetchWebPage(`http://wiki.corp.test:${port}/`, { resolver, allowList: parseAllowList(allow) });
  assert.equal(row.content, 'intranet page');
  const dotted = await fetchWebPage(`http://WIKI.corp.test.:${port}/`, { resolver, allowList: parseAllowList(allow) });
  assert.equal(dotted.content, 'intranet page');
  await blocked(`http://admin.corp.test:${port}/`, /127\.0\.0\.1 is loopback \(admin\.corp\.test resolves to/, allow);
});

test('a *.glob matches names under the domain, not the domain itself nor a look-alike suffix', async () => {
  const allow = `*.corp.test:*`;
  const row = await fetchWebPage(`http://a.b.corp.test:${port}/`, { resolver, allowList: parseAllowList(allow) });
  assert.equal(row.content, 'intranet page');
  await blocked(`http://corp.test:${port}/`, /is loopback/, allow);
  await blocked(`http://evilcorp.test:${port}/`, /is loopback/, allow);
});

test('an allow-listed range opens only that range (10.0.0.0/8 does not open 192.168/16 or loopback)', () => {
  const allowList = parseAllowList('10.0.0.0/8, [fd00::]/8:8443');
  const judge = (host: string, p: number, ...addresses: string[]) =>
    destinationRefusal({ host, port: p, addresses }, { allowList });
  assert.equal(judge('10.1.2.3', 80, '10.1.2.3'), undefined);
  assert.equal(judge('fd00::5', 8443, 'fd00::5'), undefined);
  assert.match(judge('fd00::5', 8080, 'fd00::5') ?? '', /port 8080 is not open/);
  assert.match(judge('intra.test', 80, '10.1.2.3', '192.168.1.1') ?? '', /192\.168\.1\.1 is private/);
  assert.match(judge('127.0.0.1', 80, '127.0.0.1') ?? '', /loopback/);
  assert.match(judge('::ffff:10.1.2.3', 80, '::ffff:a01:203') ?? '', /IPv4-mapped 10\.1\.2\.3, which is private/);
});

test('public unicast addresses stay reachable, in every form that denotes one', () => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])
    assert.equal(addressRefusal(ip), undefined, ip);
  const allowList = parseAllowList('');
  assert.equal(
    destinationRefusal({ host: 'example.test', port: 443, addresses: ['93.184.215.14'] }, { allowList }),
    undefined,
  );
  assert.equal(
    destinationRefusal({ host: 'example.test', port: 80, addresses: ['2606:2800:21f::1'] }, { allowList }),
    undefined,
  );
});

test('a bad DREACT_FETCH_ALLOW_HOSTS fails with an error naming the variable and the entry', () => {
  const bad: Array<[string, RegExp]> = [
    ['10.0.0.0/33', /DREACT_FETCH_ALLOW_HOSTS: entry "10\.0\.0\.0\/33" is not a valid CIDR range/],
    ['wiki.corp, bad host!', /DREACT_FETCH_ALLOW_HOSTS: entry "bad host!" is neither a host name/],
    ['wiki.corp:99999', /DREACT_FETCH_ALLOW_HOSTS: entry "wiki\.corp:99999" has a bad port "99999"/],
    ['*.', /DREACT_FETCH_ALLOW_HOSTS: entry "\*\." is neither/],
    ['http://wiki.corp/', /DREACT_FETCH_ALLOW_HOSTS: entry "http:\/\/wiki\.corp\/"/],
  ];
  for (const [raw, re] of bad) assert.throws(() => fetchAllowListFromEnv({ DREACT_FETCH_ALLOW_HOSTS: raw }), re, raw);
});

test('the allow-list is parsed once per value, and a bad one fails the tool at construction (worker start)', () => {
  const env = { DREACT_FETCH_ALLOW_HOSTS: ' wiki.corp.test:8080 , *.corp.test , 10.0.0.0/8 ,' };
  const a = fetchAllowListFromEnv(env);
  assert.equal(fetchAllowListFromEnv({ ...env }), a);
  assert.deepEqual(
    a.entries.map((e) => [e.text, e.match.kind, e.ports]),
    [
      ['wiki.corp.test:8080', 'name', [8080]],
      ['*.corp.test', 'suffix', []],
      ['10.0.0.0/8', 'cidr', []],
    ],
  );
  const saved = process.env.DREACT_FETCH_ALLOW_HOSTS;
  process.env.DREACT_FETCH_ALLOW_HOSTS = '300.1.1.1/8';
  try {
    assert.throws(() => createWebFetchImpl(), /DREACT_FETCH_ALLOW_HOSTS/);
  } finally {
    if (saved === undefined) delete process.env.DREACT_FETCH_ALLOW_HOSTS;
    else process.env.DREACT_FETCH_ALLOW_HOSTS = saved;
  }
});
