import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { extractTitle, htmlToReadableText } from '../../../activities/tools/web-page-text';
import {
  createWebFetchImpl,
  fetchWebPage,
  isNonPublicAddress,
  webFetch,
  webFetchImpl,
  WebToolError,
} from '../../../activities/tools/web-fetch';
import type { ToolContext } from '../../../activities/tools/types';
import { WebSourceRowSchema } from '../../../core/tools';

const PAGE = `<!doctype html><html><head><title>Durable &amp; Reliable Agents</title>
<style>.x{color:red}</style><script>var secret = "do-not-show";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<main><h1>Timeline-native agents</h1>
<p>Temporal makes <a href="https://temporal.io">workflows</a> durable.</p>
<img src="x.png" alt="diagram">
<ul><li>first point</li><li>second point</li></ul></main>
<footer>footer text</footer></body></html>`;

const LOCAL = { allowPrivateNetwork: true };
let server: Server;
let base = '';

before(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE);
    } else if (url === '/redirect') {
      res.writeHead(302, { location: '/page' });
      res.end();
    } else if (url === '/loop') {
      res.writeHead(307, { location: '/loop' });
      res.end();
    } else if (url === '/plain') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('just text\nsecond line');
    } else if (url === '/latin1') {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
      res.end(Buffer.from('<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me</p></body></html>', 'latin1'));
    } else if (url === '/missing') {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>not found</h1>');
    } else if (url === '/boom') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
    } else if (url === '/image') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.alloc(64));
    } else if (url === '/big-declared') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10_000) });
      res.end('x'.repeat(10_000));
    } else if (url === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 10; i++) res.write('y'.repeat(1000));
      res.end();
    } else if (url === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync('compressed text'));
    } else if (url === '/stall-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part ');
    } else if (url === '/slow') {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('late');
      }, 2000);
    } else {
      res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function rejects(p: Promise<unknown>, code: string, re: RegExp, retryable = false): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof WebToolError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, re);
    assert.equal(err.retryable, retryable);
    assert.equal(err.name, retryable ? 'WebToolError' : 'WebToolInputError');
    return true;
  });
}

test('fetches HTML and returns a readable source row', async () => {
  const row = await fetchWebPage(`${base}/page`, LOCAL);
  assert.deepEqual(WebSourceRowSchema.parse(row), row);
  assert.equal(row.url, `${base}/page`);
  assert.equal(row.title, 'Durable & Reliable Agents');
  assert.equal(row.mime, 'text/html');
  assert.equal(row.source_type, 'web');
  assert.match(row.content, /Timeline-native agents/);
  assert.match(row.content, /Temporal makes workflows durable\./);
  assert.match(row.content, /first point/);
  for (const hidden of ['do-not-show', 'color:red', 'Home', 'footer text', 'https://temporal.io', 'x.png']) {
    assert.ok(!row.content.includes(hidden), `content leaks ${hidden}`);
  }
  assert.ok(row.text.length <= 400);
  assert.ok(row.text.startsWith('Timeline-native agents'));
  assert.ok((row.size_bytes ?? 0) > 100);
});

test('follows redirects and reports the final URL', async () => {
  const row = await fetchWebPage(`${base}/redirect`, LOCAL);
  assert.equal(row.url, `${base}/page`);
});

test('plain text is kept as is; title falls back to the URL', async () => {
  const row = await fetchWebPage(`${base}/plain`, LOCAL);
  assert.equal(row.content, 'just text\nsecond line');
  assert.equal(row.title, `${base}/plain`);
  assert.equal(row.mime, 'text/plain');
});

test('decodes the declared charset', async () => {
  const row = await fetchWebPage(`${base}/latin1`, LOCAL);
  assert.equal(row.title, 'Café');
  assert.match(row.content, /crème/);
});

test('clear errors: bad URL, non-2xx, non-text, too large, timeout, network', async () => {
  await rejects(fetchWebPage('not a url'), 'bad_url', /not a valid URL/);
  await rejects(fetchWebPage('ftp://example.com/file'), 'bad_url', /only http and https/);
  await rejects(fetchWebPage(`${base}/missing`, LOCAL), 'http_status', /answered HTTP 404/);
  await rejects(fetchWebPage(`${base}/boom`, LOCAL), 'http_status', /HTTP 503/, true);
  await rejects(fetchWebPage(`${base}/image`, LOCAL), 'unsupported_content_type', /image\/png, which is not text/);
  await rejects(
    fetchWebPage(`${base}/big-declared`, { ...LOCAL, maxBytes: 5000 }),
    'too_large',
    /too large \(10000 bytes; the limit is 5000 bytes\)/,
  );
  await rejects(
    fetchWebPage(`${base}/big-chunked`, { ...LOCAL, maxBytes: 5000 }),
    'too_large',
    /too large \(more than 5000 bytes/,
  );
  await rejects(
    fetchWebPage(`${base}/slow`, { ...LOCAL, timeoutMs: 100 }),
    'timeout',
    /did not answer within 100 ms/,
    true,
  );
  await rejects(fetchWebPage('http://127.0.0.1:1/x', LOCAL), 'network', /could not fetch/, true);
});

test('webFetch validates params, caps content and collects per-URL errors', async () => {
  const res = await webFetch({ urls: [`${base}/page`, `${base}/missing`], max_chars: 200 }, LOCAL);
  assert.equal(res.rows.length, 1);
  assert.ok(res.rows[0]!.content.length <= 200 + '\n[…truncated]'.length);
  assert.deepEqual(
    res.errors.map((e) => e.code),
    ['http_status'],
  );
  await rejects(webFetch({ urls: [] }, LOCAL), 'bad_input', /invalid params: urls/);
  await rejects(webFetch({ url: `${base}/page` }, LOCAL), 'bad_input', /invalid params/);
  await rejects(webFetch({ urls: [`${base}/missing`] }, LOCAL), 'http_status', /HTTP 404/);
  await rejects(
    webFetch({ urls: [`${base}/missing`, `${base}/image`] }, LOCAL),
    'unsupported_content_type',
    /every URL failed/,
  );
});

test('html helpers', () => {
  assert.equal(extractTitle('<html><head><meta property="og:title" content="OG"></head></html>'), 'OG');
  assert.equal(extractTitle('<body><h1>Heading <b>one</b></h1></body>'), 'Heading one');
  assert.equal(extractTitle('<body>none</body>'), '');
  assert.equal(htmlToReadableText('<body><article><p>A</p></article><aside>B</aside></body>'), 'A');
});

test('webFetchImpl: rows in meta.source_rows; non-retryable errors become failed observations', async () => {
  const ctx = { signal: new AbortController().signal } as unknown as ToolContext;
  const impl = createWebFetchImpl(LOCAL);
  const ok = await impl.run({ urls: [`${base}/page`] }, ctx);
  assert.equal(ok.ok, true);
  const rows = ok.meta?.source_rows as Array<{ title: string }>;
  assert.equal(rows[0]?.title, 'Durable & Reliable Agents');
  assert.match(JSON.parse(ok.text).pages[0].content, /Timeline-native agents/);
  const bad = await impl.run({ urls: [`${base}/missing`] }, ctx);
  assert.deepEqual([bad.ok, bad.meta?.code], [false, 'http_status']);
  assert.match(bad.text, /HTTP 404/);
  await assert.rejects(
    impl.run({ urls: [`${base}/boom`] }, ctx),
    (err: unknown) => err instanceof WebToolError && err.retryable,
  );
});

test('non-public addresses are blocked by default, including via redirects', async () => {
  await rejects(
    fetchWebPage(`${base}/page`),
    'blocked_address',
    /refused http:\/\/127\.0\.0\.1:\d+\/page: 127\.0\.0\.1 is loopback/,
  );
  await rejects(fetchWebPage('http://localhost:9/x'), 'blocked_address', /is loopback \(localhost resolves to /);
  await rejects(
    fetchWebPage('http://169.254.169.254/latest/meta-data'),
    'blocked_address',
    /169\.254\.169\.254 is link-local \(the cloud metadata service\)/,
  );
  await rejects(fetchWebPage('http://[::1]:9/x'), 'blocked_address', /::1 is loopback/);
  const ctx = { signal: new AbortController().signal } as unknown as ToolContext;
  const saved = process.env.DREACT_WEB_ALLOW_PRIVATE;
  delete process.env.DREACT_WEB_ALLOW_PRIVATE;
  try {
    const obs = await webFetchImpl.run({ urls: [`${base}/page`] }, ctx);
    assert.deepEqual([obs.ok, obs.meta?.code], [false, 'blocked_address']);
  } finally {
    if (saved !== undefined) process.env.DREACT_WEB_ALLOW_PRIVATE = saved;
  }
  for (const ip of [
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'not-an-ip',
  ]) {
    assert.equal(isNonPublicAddress(ip), true, ip);
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(isNonPublicAddress(ip), false, ip);
  }
});

test('redirect loops stop with too_many_redirects', async () => {
  await rejects(fetchWebPage(`${base}/loop`, LOCAL), 'too_many_redirects', /redirected more than 5 times/);
});

test('decompresses gzip bodies as fetch did', async () => {
  const row = await fetchWebPage(`${base}/gzip`, LOCAL);
  assert.equal(row.content, 'compressed text');
});

test('a body that stalls past the timeout fails as a timeout, never as a truncated page', async () => {
  await rejects(
    fetchWebPage(`${base}/stall-body`, { ...LOCAL, timeoutMs: 200 }),
    'timeout',
    /did not answer within 200 ms/,
    true,
  );
});

test('cancellation during the body ends the fetch as cancelled', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  await rejects(fetchWebPage(`${base}/stall-body`, { ...LOCAL, signal: ac.signal }), 'network', /was cancelled/);
});
