import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  isPoolEligibleFile,
  mergeSources,
  normalizeUrl,
  remapToolSources,
  renderSourcesPool,
  selectSources,
  sourceDedupKey,
  SourceRowSchema,
  SOURCES_POOL_MAX_BASE64_CHARS,
  tryNormalizeUrl,
  type SourceRow,
} from '../../../core/timeline/sources';

// ---------------------------------------------------------------------------------------------
// URL normalisation
// ---------------------------------------------------------------------------------------------

const URL_CASES: Array<[string, string]> = [
  // scheme + host lower-cased, path case kept
  ['HTTPS://Example.COM/Path/To', 'https://example.com/Path/To'],
  // default ports removed only for their own scheme
  ['http://example.com:80/a', 'http://example.com/a'],
  ['https://example.com:443/a', 'https://example.com/a'],
  ['http://example.com:443/a', 'http://example.com:443/a'],
  ['https://example.com:80/a', 'https://example.com:80/a'],
  // 8080 / 8443 kept (the original's rstrip(":80") / rstrip(":443") removed them)
  ['http://example.com:8080/a', 'http://example.com:8080/a'],
  ['https://example.com:8443/a', 'https://example.com:8443/a'],
  ['http://example.com:8000/', 'http://example.com:8000/'],
  ['https://example.com:4430', 'https://example.com:4430/'],
  // hosts ending in the characters of ":80"/":443" are not mangled
  ['http://10.0.0.80/x', 'http://10.0.0.80/x'],
  ['http://10.0.0.80:80/x', 'http://10.0.0.80/x'],
  ['https://api.v3/x', 'https://api.v3/x'],
  ['https://host4.example.com34/x', 'https://host4.example.com34/x'],
  ['https://cdn443.example.com:443/', 'https://cdn443.example.com/'],
  ['http://10.4.4.3:80/', 'http://10.4.4.3/'],
  // IPv4 / IPv6 hosts
  ['http://192.168.1.1:8080/a/', 'http://192.168.1.1:8080/a'],
  ['http://[::1]:80/a', 'http://[::1]/a'],
  ['http://[2001:DB8::1]:8080/x', 'http://[2001:db8::1]:8080/x'],
  ['https://[2001:db8::443]/', 'https://[2001:db8::443]/'],
  // missing scheme -> https (not "https:///example.com/path")
  ['example.com/path', 'https://example.com/path'],
  ['Example.com', 'https://example.com/'],
  ['www.example.com/a/?utm_source=x', 'https://www.example.com/a'],
  ['localhost:3000/x', 'https://localhost:3000/x'],
  ['//cdn.example.com/lib.js', 'https://cdn.example.com/lib.js'],
  ['  https://example.com/a  ', 'https://example.com/a'],
  // fragment dropped
  ['https://example.com/a#section-2', 'https://example.com/a'],
  ['https://example.com/#top', 'https://example.com/'],
  // tracking parameters dropped (case-insensitive, any utm_*), other params kept in order
  ['https://x.com/p?b=2&utm_source=tw&a=1&UTM_Medium=m&c=3', 'https://x.com/p?b=2&a=1&c=3'],
  ['https://x.com/p?utm_id=1&utm_whatever=2&gclid=3&fbclid=4', 'https://x.com/p'],
  ['https://x.com/p?z=1&y=2&x=3', 'https://x.com/p?z=1&y=2&x=3'],
  ['https://x.com/p?a=1&&b=2&', 'https://x.com/p?a=1&b=2'],
  ['https://x.com/p?utm=keep&xutm_source=keep', 'https://x.com/p?utm=keep&xutm_source=keep'],
  ['https://x.com/p?q=a%20b&flag', 'https://x.com/p?q=a%20b&flag'],
  ['https://x.com/p?', 'https://x.com/p'],
  // trailing slash rule: root keeps "/", others lose trailing slashes
  ['https://example.com', 'https://example.com/'],
  ['https://example.com/', 'https://example.com/'],
  ['https://example.com/a/', 'https://example.com/a'],
  ['https://example.com/a//', 'https://example.com/a'],
  ['https://example.com/a/?q=1', 'https://example.com/a?q=1'],
  // WHATWG path normalisation
  ['https://example.com/a/../b', 'https://example.com/b'],
];

for (const [input, want] of URL_CASES) {
  test(`normalizeUrl(${JSON.stringify(input)})`, () => assert.equal(normalizeUrl(input), want));
}

test('normalizeUrl: non-URLs are undefined / a readable error', () => {
  for (const bad of ['', '   ', 'not a url', 'http://', 'https://exa mple.com']) {
    assert.equal(tryNormalizeUrl(bad), undefined, bad);
    assert.throws(() => normalizeUrl(bad), /not a URL/);
  }
});

test('normalizeUrl is idempotent (property)', () => {
  const host = fc.constantFrom('example.com', 'EXAMPLE.org', '10.0.0.80', '[::1]', 'api.v3.io');
  const port = fc.constantFrom('', ':80', ':443', ':8080', ':8443');
  const scheme = fc.constantFrom('http://', 'https://', 'HTTPS://', '');
  const seg = fc.stringMatching(/^[a-z0-9]{1,5}$/);
  const param = fc.tuple(fc.constantFrom('a', 'b', 'utm_source', 'gclid', 'q'), seg).map(([k, v]) => `${k}=${v}`);
  fc.assert(
    fc.property(
      scheme,
      host,
      port,
      fc.array(seg, { maxLength: 3 }),
      fc.boolean(),
      fc.array(param, { maxLength: 4 }),
      (s, h, p, segs, slash, params) => {
        const url = `${s}${h}${p}/${segs.join('/')}${slash ? '/' : ''}${params.length ? `?${params.join('&')}` : ''}#frag`;
        const once = normalizeUrl(url);
        assert.equal(normalizeUrl(once), once);
        assert.doesNotMatch(once, /#|utm_|gclid/);
        if (p === ':8080' || p === ':8443') assert.ok(once.includes(p), `${url} keeps ${p}`);
      },
    ),
  );
});

test('sourceDedupKey: local path first, then normalised URL, raw fallback, none', () => {
  assert.equal(
    sourceDedupKey({ url: 'https://x.com/a/', physical_path: 'turn_1/files/a.png' }),
    'local:turn_1/files/a.png',
  );
  assert.equal(sourceDedupKey({ url: 'HTTPS://X.com/a/#f' }), 'https://x.com/a');
  assert.equal(sourceDedupKey({ url: 'not a url' }), 'raw:not a url');
  assert.equal(sourceDedupKey({ url: '' }), undefined);
  assert.equal(sourceDedupKey({}), undefined);
});

// ---------------------------------------------------------------------------------------------
// Rows, merge, remap
// ---------------------------------------------------------------------------------------------

const row = (sid: number, url: string, extra: Partial<SourceRow> = {}): SourceRow =>
  SourceRowSchema.parse({ sid, url, title: `t${sid}`, ...extra });

test('SourceRowSchema: legacy local_path becomes physical_path; unknown fields survive', () => {
  const r = SourceRowSchema.parse({ sid: 1, local_path: 'turn_1/files/x.png', custom: 7 });
  assert.equal(r.physical_path, 'turn_1/files/x.png');
  assert.equal('local_path' in r, false);
  assert.equal(r['custom'], 7);
  assert.equal(r.title, '');
  assert.throws(() => SourceRowSchema.parse({ sid: 0 }));
  assert.throws(() => SourceRowSchema.parse({ sid: 1.5 }));
});

test('merge keeps existing SIDs stable and enriches duplicates', () => {
  const pool = [row(1, 'https://a.com/x', { text: 'short' }), row(2, 'https://b.com/', { objective_relevance: 0.9 })];
  const r = mergeSources(pool, [
    { sid: 1, url: 'http://c.com', title: 'C' },
    {
      sid: 2,
      url: 'HTTPS://A.com/x/?utm_source=z#f',
      title: 'a much longer title',
      text: 'a longer snippet',
      favicon_url: 'https://a.com/f.ico',
    },
    { sid: 3, url: 'https://b.com', objective_relevance: 0.4, query_relevance: 0.7, title: 'b' },
  ]);
  assert.deepEqual(
    r.pool.map((x) => [x.sid, x.url]),
    [
      [1, 'https://a.com/x'],
      [2, 'https://b.com/'],
      [3, 'http://c.com'],
    ],
  );
  const a = r.pool[0]!;
  assert.equal(a.title, 'a much longer title');
  assert.equal(a.text, 'a longer snippet');
  assert.equal(a.favicon_url, 'https://a.com/f.ico');
  const b = r.pool[1]!;
  assert.equal(b.title, 't2');
  assert.equal(b.objective_relevance, 0.9);
  assert.equal(b.query_relevance, 0.7);
  assert.deepEqual(r.mapping, { 1: 3, 2: 1, 3: 2 });
  assert.deepEqual(r.added, [3]);
  assert.deepEqual(r.updated, [1, 2]);
});

test('merge: a new row keeps its SID if positive and unused, else max+1; output sorted', () => {
  const pool = [row(1, 'https://a.com'), row(5, 'https://e.com')];
  const r = mergeSources(pool, [
    { sid: 9, url: 'https://i.com' },
    { sid: 5, url: 'https://new5.com' },
    { sid: 0, url: 'https://zero.com' },
    { sid: -2, url: 'https://neg.com' },
    { url: 'https://nosid.com' },
    { sid: 3, url: 'https://c.com' },
  ]);
  assert.deepEqual(
    r.pool.map((x) => [x.sid, x.url]),
    [
      [1, 'https://a.com'],
      [3, 'https://c.com'],
      [5, 'https://e.com'],
      [9, 'https://i.com'],
      [10, 'https://new5.com'],
      [11, 'https://zero.com'],
      [12, 'https://neg.com'],
      [13, 'https://nosid.com'],
    ],
  );
  assert.deepEqual(r.mapping, { 9: 9, 5: 10, 0: 11, '-2': 12, 3: 3 });
});

test('merge: duplicates inside the incoming batch collapse; local paths dedup; big base64 dropped', () => {
  const big = 'A'.repeat(SOURCES_POOL_MAX_BASE64_CHARS + 1);
  const r = mergeSources(
    [],
    [
      { sid: 1, url: 'https://x.com/a' },
      { sid: 2, url: 'https://x.com/a/' },
      { sid: 3, physical_path: 'turn_1/files/img.png', mime: 'image/png', base64: big },
      { sid: 4, local_path: 'turn_1/files/img.png', title: 'image' },
      { sid: 5, physical_path: 'turn_1/files/other.png', base64: 'QUJD' },
    ],
  );
  assert.deepEqual(
    r.pool.map((x) => x.sid),
    [1, 3, 5],
  );
  assert.deepEqual(r.mapping, { 1: 1, 2: 1, 3: 3, 4: 3, 5: 5 });
  assert.equal(r.pool[1]!.base64, undefined);
  assert.equal(r.pool[1]!.title, 'image');
  assert.equal(r.pool[2]!.base64, 'QUJD');
});

test('merge: readable errors for bad rows and a corrupt pool', () => {
  assert.throws(() => mergeSources([], [{ sid: 1, url: 5 } as never]), /invalid source row #1: url/);
  assert.throws(() => mergeSources([row(1, 'https://a.com'), row(1, 'https://b.com')], []), /duplicate sid 1/);
});

test('remapToolSources: tool-local SIDs always map onto the pool (the 88852901d bug)', () => {
  const pool = [row(1, 'https://a.com'), row(2, 'https://b.com')];
  const r = remapToolSources(pool, [
    { sid: 1, url: 'https://new.com/1' },
    { sid: 2, url: 'https://b.com/' },
    { sid: 3, url: 'https://new.com/3' },
  ]);
  assert.deepEqual(r.mapping, { 1: 3, 2: 2, 3: 4 });
  assert.deepEqual(
    r.pool.map((x) => [x.sid, x.url]),
    [
      [1, 'https://a.com'],
      [2, 'https://b.com'],
      [3, 'https://new.com/1'],
      [4, 'https://new.com/3'],
    ],
  );
  // with a gap, remap never keeps a local sid
  const gap = remapToolSources([row(1, 'https://a.com'), row(5, 'https://e.com')], [{ sid: 2, url: 'https://z.com' }]);
  assert.deepEqual(gap.mapping, { 2: 6 });
});

test('merge property: prior SIDs and URLs never change; every incoming sid is mapped into the pool', () => {
  const urlArb = fc.constantFrom(
    'https://a.com',
    'https://a.com/',
    'HTTPS://A.COM/#x',
    'https://b.com/p',
    'https://b.com/p?utm_source=1',
    'https://c.com:8080',
    'https://c.com:443',
    'd.com',
  );
  const rowArb = fc.record({ sid: fc.integer({ min: -1, max: 8 }), url: urlArb });
  fc.assert(
    fc.property(
      fc.array(rowArb, { maxLength: 6 }),
      fc.array(rowArb, { maxLength: 6 }),
      fc.boolean(),
      (first, second, keep) => {
        const p1 = mergeSources([], first, { keepIncomingSids: keep }).pool;
        const r = mergeSources(p1, second, { keepIncomingSids: keep });
        for (const prior of p1) assert.equal(r.pool.find((x) => x.sid === prior.sid)?.url, prior.url);
        const sids = r.pool.map((x) => x.sid);
        assert.deepEqual(
          sids,
          [...sids].sort((a, b) => a - b),
        );
        assert.equal(new Set(sids).size, sids.length);
        const keys = r.pool.map((x) => sourceDedupKey(x));
        assert.equal(new Set(keys).size, keys.length, 'no duplicate keys');
        for (const to of Object.values(r.mapping)) assert.ok(sids.includes(to));
      },
    ),
  );
});

// ---------------------------------------------------------------------------------------------
// Selectors and rendering
// ---------------------------------------------------------------------------------------------

const POOL = [row(2, 'https://b.com'), row(1, 'https://a.com'), row(3, 'https://c.com'), row(5, 'https://e.com')];

test('selectSources: lists, ranges, reversed ranges, all, pool order, unknown SIDs skipped', () => {
  const sel = (s: string | number[] | null) => selectSources(POOL, s).map((r) => r.sid);
  assert.deepEqual(sel('so:sources_pool[1,3-5]'), [1, 3, 5]);
  assert.deepEqual(sel('so:sources_pool[5-1]'), [2, 1, 3, 5]);
  assert.deepEqual(sel('sources_pool[3:2]'), [2, 3]);
  assert.deepEqual(sel('conv:so:sources_pool[5,1]'), [1, 5]);
  assert.deepEqual(sel('so:sources_pool[42]'), []);
  assert.deepEqual(sel('so:sources_pool'), [2, 1, 3, 5]);
  assert.deepEqual(sel([3, 2]), [2, 3]);
  assert.deepEqual(sel(null), [2, 1, 3, 5]);
  assert.throws(() => sel('ar:turn_1.user.prompt'), /not a sources pool path/);
  assert.throws(() => sel('so:sources_pool[1-]'), /invalid sources selector item/);
});

test('renderSourcesPool: compact, SID-ordered, one line per row plus snippet', () => {
  const text = renderSourcesPool([
    row(2, 'https://b.com/x', {
      title: 'B | pipes\nand newline',
      text: 'word '.repeat(100),
      source_type: 'web',
      published_time_iso: '2026-01-01',
      objective_relevance: 0.876,
    }),
    row(1, 'https://img.com/a.png', { mime: 'image/png', title: '' }),
    row(3, '', { physical_path: 'turn_1/files/c.png', title: 'local', content: 'FULL CONTENT NEVER SHOWN' }),
  ]);
  const lines = text.split('\n');
  assert.equal(lines[0], '[SOURCES POOL]');
  assert.match(lines[1]!, /sources: 3 .*so:sources_pool\[1-3\]/);
  assert.equal(lines[2], '  [S:1] (untitled) <https://img.com/a.png> (mime=image/png, render-only)');
  assert.equal(
    lines[3],
    '  [S:2] B | pipes and newline <https://b.com/x> (type=web, published=2026-01-01, relevance=0.88)',
  );
  assert.ok(lines[4]!.startsWith('      word word'));
  assert.ok(lines[4]!.length <= 6 + 160);
  assert.ok(lines[4]!.endsWith('…'));
  assert.equal(lines[5], '  [S:3] local <turn_1/files/c.png>');
  assert.doesNotMatch(text, /FULL CONTENT/);
  assert.equal(renderSourcesPool([]), '[SOURCES POOL]\n  - sources: none');
  assert.match(renderSourcesPool([row(1, 'https://a.com', { text: 'abcdef' })], { snippetChars: 4 }), /\n {6}abc…$/);
});

test('isPoolEligibleFile: images only', () => {
  assert.equal(isPoolEligibleFile('image/png'), true);
  assert.equal(isPoolEligibleFile(' IMAGE/JPEG'), true);
  assert.equal(isPoolEligibleFile('application/pdf'), false);
  assert.equal(isPoolEligibleFile('text/plain'), false);
  assert.equal(isPoolEligibleFile(undefined), false);
});
