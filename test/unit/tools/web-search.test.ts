import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from '../../../activities/tools/types';
import {
  BraveSearchProvider,
  createWebSearchImpl,
  SearxngSearchProvider,
  searchProviderFromEnv,
  webSearch,
} from '../../../activities/tools/web-search';
import { WebToolError } from '../../../activities/tools/web-fetch';
import { WebSourceRowSchema } from '../../../core/tools';

let server: Server;
let base = '';
const seen: Array<{ url: string; token?: string }> = [];

function braveBody(q: string, count: number): unknown {
  const results = Array.from({ length: 12 }, (_, i) => ({
    title: `<strong>${q}</strong> result ${i + 1}`,
    url: `https://example.com/${i + 1}`,
    description: `About <strong>${q}</strong> &amp; more (${i + 1})`,
    page_age: '2025-01-0' + ((i % 9) + 1) + 'T00:00:00',
  }));
  if (q === 'dup')
    results.splice(1, 0, { title: 'dup', url: 'https://example.com/1', description: 'again', page_age: '' });
  return { type: 'search', web: { type: 'search', results: results.slice(0, count) } };
}

before(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    seen.push({ url: req.url ?? '', token: req.headers['x-subscription-token'] as string | undefined });
    if (u.pathname === '/brave/res/v1/web/search') {
      if (req.headers['x-subscription-token'] !== 'key-123') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":"invalid token"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(braveBody(u.searchParams.get('q') ?? '', Number(u.searchParams.get('count')))));
    } else if (u.pathname === '/searx/search') {
      if (u.searchParams.get('format') !== 'json') {
        res.writeHead(403);
        res.end('json format disabled');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          query: u.searchParams.get('q'),
          results: [
            { url: 'https://a.example/', title: 'A page', content: 'snippet a', publishedDate: '2024-05-01T10:00:00' },
            { url: 'javascript:alert(1)', title: 'bad', content: 'ignored' },
            { url: 'https://b.example/x', title: 'B page', content: 'snippet b', publishedDate: null },
          ],
        }),
      );
    } else if (u.pathname === '/broken/search') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not json</html>');
    } else {
      res.writeHead(502);
      res.end('bad gateway');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('Brave provider: query, count, auth header, rows with plain-text titles and snippets', async () => {
  const provider = new BraveSearchProvider({ apiKey: 'key-123', endpoint: `${base}/brave/res/v1/web/search` });
  const res = await webSearch({ query: 'temporal', top_k: 3 }, provider);
  assert.equal(res.provider, 'brave');
  assert.equal(res.rows.length, 3);
  for (const row of res.rows) assert.deepEqual(WebSourceRowSchema.parse(row), row);
  assert.deepEqual(res.rows[0], {
    url: 'https://example.com/1',
    title: 'temporal result 1',
    text: 'About temporal & more (1)',
    content: 'About temporal & more (1)',
    mime: 'text/html',
    source_type: 'web',
    published_time_iso: new Date('2025-01-01T00:00:00').toISOString(),
  });
  const last = seen.at(-1)!;
  assert.match(last.url, /q=temporal/);
  assert.match(last.url, /count=3/);
  assert.equal(last.token, 'key-123');
});

test('rows are de-duplicated by URL and default top_k is 5', async () => {
  const provider = new BraveSearchProvider({ apiKey: 'key-123', endpoint: `${base}/brave/res/v1/web/search` });
  const res = await webSearch({ query: 'dup' }, provider);
  assert.match(seen.at(-1)!.url, /count=5/);
  assert.deepEqual(
    res.rows.map((r) => r.url),
    ['https://example.com/1', 'https://example.com/2', 'https://example.com/3', 'https://example.com/4'],
  );
});

test('SearXNG provider: JSON format, non-http URLs dropped', async () => {
  const provider = new SearxngSearchProvider({ baseUrl: `${base}/searx` });
  const res = await webSearch({ query: 'durable agents', top_k: 10 }, provider);
  assert.equal(res.provider, 'searxng');
  assert.deepEqual(
    res.rows.map((r) => [r.url, r.title, r.text]),
    [
      ['https://a.example/', 'A page', 'snippet a'],
      ['https://b.example/x', 'B page', 'snippet b'],
    ],
  );
  assert.ok(res.rows[0]!.published_time_iso);
  assert.equal(res.rows[1]!.published_time_iso, undefined);
  assert.match(seen.at(-1)!.url, /^\/searx\/search\?q=durable\+agents&format=json$/);
});

test('clear errors: bad params, auth failure, server error, non-JSON, unreachable', async () => {
  const brave = (key: string): BraveSearchProvider =>
    new BraveSearchProvider({ apiKey: key, endpoint: `${base}/brave/res/v1/web/search` });
  const check = (code: string, re: RegExp, retryable: boolean) => (err: unknown) => {
    assert.ok(err instanceof WebToolError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, re);
    assert.equal(err.retryable, retryable);
    return true;
  };
  await assert.rejects(
    webSearch({ query: '   ' }, brave('key-123')),
    check('bad_input', /invalid params: query/, false),
  );
  await assert.rejects(webSearch({ query: 'x', top_k: 50 }, brave('key-123')), check('bad_input', /top_k/, false));
  await assert.rejects(
    webSearch({ query: 'x' }, brave('wrong')),
    check('http_status', /HTTP 401: \{"error":"invalid token"\}/, false),
  );
  await assert.rejects(
    webSearch({ query: 'x' }, new SearxngSearchProvider({ baseUrl: `${base}/nowhere` })),
    check('http_status', /HTTP 502/, true),
  );
  await assert.rejects(
    webSearch({ query: 'x' }, new SearxngSearchProvider({ baseUrl: `${base}/broken` })),
    check('bad_response', /not JSON/, false),
  );
  await assert.rejects(
    webSearch({ query: 'x' }, new SearxngSearchProvider({ baseUrl: 'http://127.0.0.1:1' })),
    check('network', /request failed/, true),
  );
});

test('searchProviderFromEnv picks SearXNG, then Brave, else explains what to set', () => {
  assert.equal(searchProviderFromEnv({ DREACT_SEARXNG_URL: 'http://s', BRAVE_API_KEY: 'k' }).id, 'searxng');
  assert.equal(searchProviderFromEnv({ BRAVE_API_KEY: 'k' }).id, 'brave');
  assert.throws(() => searchProviderFromEnv({}), /set DREACT_SEARXNG_URL .* or BRAVE_API_KEY/);
  assert.throws(() => new BraveSearchProvider({ apiKey: '' }), /apiKey is required/);
});

test('createWebSearchImpl: rows in meta.source_rows; non-retryable errors become failed observations', async () => {
  const ctx = { signal: new AbortController().signal } as unknown as ToolContext;
  const ok = await createWebSearchImpl(new SearxngSearchProvider({ baseUrl: `${base}/searx` })).run(
    { query: 'x' },
    ctx,
  );
  assert.equal(ok.ok, true);
  assert.equal((ok.meta?.source_rows as unknown[]).length, 2);
  assert.equal(JSON.parse(ok.text).results[0].url, 'https://a.example/');
  const bad = await createWebSearchImpl(new SearxngSearchProvider({ baseUrl: `${base}/broken` })).run(
    { query: 'x' },
    ctx,
  );
  assert.deepEqual([bad.ok, bad.meta?.code], [false, 'bad_response']);
  const saved = { s: process.env.DREACT_SEARXNG_URL, b: process.env.BRAVE_API_KEY };
  delete process.env.DREACT_SEARXNG_URL;
  delete process.env.BRAVE_API_KEY;
  try {
    const unconfigured = await createWebSearchImpl().run({ query: 'x' }, ctx);
    assert.equal(unconfigured.ok, false);
    assert.match(unconfigured.text, /web_search is not configured/);
  } finally {
    if (saved.s !== undefined) process.env.DREACT_SEARXNG_URL = saved.s;
    if (saved.b !== undefined) process.env.BRAVE_API_KEY = saved.b;
  }
  await assert.rejects(
    createWebSearchImpl(new SearxngSearchProvider({ baseUrl: `${base}/nowhere` })).run({ query: 'x' }, ctx),
    (err: unknown) => err instanceof WebToolError && err.retryable,
  );
});
