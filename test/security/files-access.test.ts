/**
 * Security suite, hosted files (issue 32): who may download a conversation's files and how they
 * are served. Every case names what it attacks:
 * - another tenant gets 404 for the list and each file, whatever spelling of the id it tries;
 * - signed URLs: tampered, expired, for another file or conversation, a stream token in their
 *   place, or signed by a key revoked since → 403; a valid one works without a key;
 * - path traversal (`..`, encoded `%2e%2e` and `%2F`, double-encoded, absolute, backslashes, NUL)
 *   never reaches a file: 400 from the file route, or another route's 404 after URL normalisation;
 * - HTML and SVG are attachments under `Content-Security-Policy: sandbox` (never script on the
 *   chat's origin); names in Content-Disposition are safe;
 * - a purged conversation's files (rows and blobs) are gone: 404.
 *
 * Real Temporal and Postgres (test/support/stack.ts), the gateway on a real port (raw paths).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { complete, callTool, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey, revokeApiKey } from '../../store/tenancy-store';
import { tokenSigner } from '../../apps/gateway/stream-token';
import { contentDisposition, fileKeyOf } from '../../apps/gateway/file-routes';

const SECRET = 'files-access-test-secret';
const HTML = '<html><body><script>fetch("/v1/conversations", {credentials: "include"})</script></body></html>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>';
let stack: TestStack;
let gw: RunningGateway;
let alice: { id: string; key: string };
let globex: string;
let conv: string;
let stored: string;

const get = (p: string, key?: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${p}`, { headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
const fileUrl = (name: string, c = conv) => `/v1/conversations/${c}/files/turn_1/outputs/${name}`;

/** A request with the path exactly as written (fetch would normalise dot segments first). */
function raw(path: string, key: string): Promise<{ status: number; body: string }> {
  const u = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path, method: 'GET', headers: { 'x-api-key': key } },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function signedUrls(key: string, c = conv): Promise<Record<string, string>> {
  const res = await get(`/v1/conversations/${c}/files?signed=1`, key);
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { files: Array<{ name: string; signedUrl: string }> };
  return Object.fromEntries(body.files.map((f) => [f.name, f.signedUrl]));
}

async function startConversation(key: string, id: string): Promise<void> {
  const rounds = [
    callTool('react.write', { path: 'outputs/page.html', channel: 'internal', content: HTML, kind: 'file' }),
    callTool('react.write', { path: 'outputs/logo.svg', channel: 'internal', content: SVG, kind: 'file' }),
    callTool('react.write', { path: 'outputs/notes.txt', channel: 'internal', content: 'plain notes', kind: 'file' }),
    complete('done'),
  ];
  const res = await fetch(`${gw.url}/v1/conversations/${id}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'write files', options: { model: { provider: 'scripted', script: { rounds } } } }),
  });
  assert.equal(res.status, 202, await res.clone().text());
  const { conversationId } = (await res.json()) as { conversationId: string };
  assert.equal(conversationId, id);
}

before(async () => {
  stack = await createTestStack('filesec');
  await stack.startWorker();
  const pool = stack.db.pool;
  alice = await createApiKey(pool, { tenantId: 'acme', projectId: 'web', userId: 'alice', scopes: ['read', 'write'] });
  globex = (await createApiKey(pool, { tenantId: 'globex', projectId: 'web', userId: null, scopes: ['read', 'write'] }))
    .key;
  gw = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    tokenSecret: SECRET,
    listen: false,
    web: false,
    allowScripted: true,
    port: 0,
    log: () => {},
  });
  conv = uniqueId('conv');
  stored = `acme~web~alice~${conv}`;
  await startConversation(alice.key, conv);
  await stack.client.result(stored, 1);
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

test('attack: another tenant lists or downloads the files → 404, whatever spelling of the id it tries', async () => {
  assert.equal((await get(fileUrl('notes.txt'), alice.key)).status, 200, 'the owner can');
  for (const id of [conv, stored, encodeURIComponent(stored), `web~alice~${conv}`]) {
    const listed = await get(`/v1/conversations/${id}/files`, globex);
    assert.ok([400, 404].includes(listed.status), `${id}: ${listed.status}`);
    const file = await get(fileUrl('notes.txt', id), globex);
    assert.ok([400, 404].includes(file.status), `${id}: ${file.status}`);
    assert.doesNotMatch(await file.text(), /plain notes/);
  }
  // Its own signed URLs are for its own space: one used on alice's URL is refused.
  const own = uniqueId('own');
  await startConversation(globex, own);
  await stack.client.result(`globex~web~${own}`, 1);
  const token = new URL((await signedUrls(globex, own))['notes.txt']!, gw.url).searchParams.get('token')!;
  const res = await get(`${fileUrl('notes.txt')}?token=${encodeURIComponent(token)}`);
  assert.equal(res.status, 403);
  assert.match(await res.text(), /another conversation/);
});

test('attack: signed URLs tampered, expired, for another file, a stream token in their place, or of a revoked key → 403', async () => {
  const urls = await signedUrls(alice.key);
  const ok = await get(urls['notes.txt']!);
  assert.equal(ok.status, 200, 'a valid link works without a key');
  assert.equal(await ok.text(), 'plain notes');

  const token = new URL(urls['notes.txt']!, gw.url).searchParams.get('token')!;
  const [body, mac] = token.split('.') as [string, string];
  const flip = (s: string) => (s[5] === 'A' ? `${s.slice(0, 5)}B${s.slice(6)}` : `${s.slice(0, 5)}A${s.slice(6)}`);
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
  const signer = tokenSigner(SECRET);
  const forged = Buffer.from(JSON.stringify({ ...payload, f: 'turn_1/outputs/page.html' })).toString('base64url');
  const cases: Array<[string, string, RegExp]> = [
    ['tampered MAC', `${body}.${flip(mac)}`, /invalid file link/],
    ['tampered body', `${flip(body)}.${mac}`, /invalid|malformed/],
    ['body of another file, old MAC', `${forged}.${mac}`, /invalid file link/],
    ['expired', signer.seal({ ...payload, exp: Date.now() - 1000 }, 'file'), /expired/],
    ['signed for another file', signer.seal({ ...payload, f: 'turn_1/outputs/page.html' }, 'file'), /another file/],
    ['signed without the file purpose', signer.seal(payload), /invalid file link/],
    ['garbage', 'not-a-token', /malformed/],
  ];
  for (const [what, t, re] of cases) {
    const res = await get(`${fileUrl('notes.txt')}?token=${encodeURIComponent(t)}`);
    assert.equal(res.status, 403, what);
    assert.match(await res.text(), re, what);
  }
  // A stream token of the same conversation opens no file.
  const st = await fetch(`${gw.url}/v1/conversations/${conv}/stream-token`, {
    method: 'POST',
    headers: { 'x-api-key': alice.key },
  });
  const { token: streamToken } = (await st.json()) as { token: string };
  assert.equal((await get(`${fileUrl('notes.txt')}?token=${encodeURIComponent(streamToken)}`)).status, 403);

  // Revoking the key that signed a link ends the link.
  const bob = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: 'alice',
    scopes: ['read'],
  });
  const bobUrls = await signedUrls(bob.key);
  assert.equal((await get(bobUrls['notes.txt']!)).status, 200);
  await revokeApiKey(stack.db.pool, bob.id);
  const revoked = await get(bobUrls['notes.txt']!);
  assert.equal(revoked.status, 403);
  assert.match(await revoked.text(), /revoked/);
});

test('attack: path traversal — dot segments, encoded, double-encoded, absolute, backslashes, NUL — never reaches a file', async () => {
  const base = `/v1/conversations/${conv}/files`;
  const refused: string[] = [
    `${base}/turn_1%2F..%2F..%2Fturn_1%2Foutputs%2Fnotes.txt`,
    `${base}/turn_1/outputs/%252e%252e/notes.txt`,
    `${base}/%2Fetc%2Fpasswd`,
    `${base}/turn_1/outputs/..%5C..%5Cnotes.txt`,
    `${base}/turn_1/outputs/notes.txt%00.png`,
    `${base}/C:%5Cwindows%5Cwin.ini`,
    `${base}/turn_1//outputs/notes.txt`,
  ];
  for (const p of refused) {
    const res = await raw(p, alice.key);
    assert.equal(res.status, 400, `${p}: ${res.body}`);
    assert.doesNotMatch(res.body, /plain notes/);
  }
  // Dot segments (plain or %2e-encoded, or with backslashes) are resolved by URL parsing before
  // routing: they name another route (404), never a file outside the conversation.
  for (const p of [
    `${base}/turn_1/outputs/../../../../../etc/passwd`,
    `${base}/turn_1/outputs/%2e%2e/%2e%2e/%2e%2e/%2e%2e/x`,
    `${base}/..\\..\\..\\x`,
  ]) {
    const res = await raw(p, alice.key);
    assert.ok([400, 404].includes(res.status), `${p}: ${res.status}`);
    assert.doesNotMatch(res.body, /plain notes|root:/);
  }
  assert.throws(() => fileKeyOf('turn_1/outputs/%2e%2e/x'), /traversal/);
  assert.throws(() => fileKeyOf('..%2Fturn_1'), /traversal/);
  assert.throws(() => fileKeyOf('%2Fetc'), /absolute/);
  assert.throws(() => fileKeyOf('turn_1/%5C..'), /backslash/);
  assert.throws(() => fileKeyOf('turn_1/outputs/%E0%A4%A'), /percent-encoding/);
  assert.throws(() => fileKeyOf('turn_1/secrets/x'), /expected <turn id>/);
  assert.equal(fileKeyOf('turn_1/outputs/r%C3%A9sum%C3%A9.pdf'), 'turn_1/outputs/résumé.pdf');
  // The model's name for a file (a fi: path) denotes its key, under the same rules.
  assert.equal(fileKeyOf('fi%3Aturn_1.outputs/notes.txt'), 'turn_1/outputs/notes.txt');
  assert.equal(fileKeyOf('conv:fi:turn_1.user.attachments/a.csv'), 'turn_1/attachments/a.csv');
  assert.throws(() => fileKeyOf('fi:turn_1.outputs/%2e%2e/x'), /traversal/);
  assert.throws(() => fileKeyOf('fi:turn_1.outputs/..%2F..%2Fx'), /traversal/);
  assert.throws(() => fileKeyOf('fi:turn_1.git/projects/x'), /names no file/);
});

test('attack: an encoded dot segment that stays inside the conversation (%2e%2e, .%2E) is served (200) → 400, decided on the path as sent', async () => {
  const base = `/v1/conversations/${conv}/files`;
  for (const p of [
    `${base}/turn_1/outputs/%2e%2e/outputs/notes.txt`,
    `${base}/turn_1/outputs/.%2E/outputs/notes.txt`,
    `${base}/turn_1/outputs/%2e/notes.txt`,
    `${base}/turn_1/outputs/%252e%252e/outputs/notes.txt`,
  ]) {
    const res = await raw(p, alice.key);
    assert.equal(res.status, 400, `${p}: ${res.status} ${res.body}`);
    assert.match(res.body, /file path/);
    assert.doesNotMatch(res.body, /plain notes/);
  }
  const plain = await raw(`${base}/turn_1/outputs/notes.txt`, alice.key);
  assert.equal(plain.status, 200);
});

test('attack: HTML and SVG are attachments under CSP sandbox; text is inline; names are safe in Content-Disposition', async () => {
  for (const [name, type] of [
    ['page.html', 'text/html; charset=utf-8'],
    ['logo.svg', 'image/svg+xml'],
  ] as const) {
    const res = await get(fileUrl(name), alice.key);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), type);
    assert.match(res.headers.get('content-disposition') ?? '', new RegExp(`^attachment; filename="${name}"`));
    assert.match(res.headers.get('content-security-policy') ?? '', /(^|;\s*)sandbox(;|$)/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    await res.arrayBuffer();
  }
  const text = await get(fileUrl('notes.txt'), alice.key);
  assert.match(text.headers.get('content-disposition') ?? '', /^inline;/);
  assert.equal(text.headers.get('content-security-policy'), null);
  await text.arrayBuffer();
  assert.equal(
    contentDisposition('attachment', 'ré"sumé\r\n.html'),
    `attachment; filename="r__sum___.html"; filename*=UTF-8''r%C3%A9%22sum%C3%A9%0D%0A.html`,
  );
  assert.equal(contentDisposition('inline', '..'), `inline; filename="download"; filename*=UTF-8''..`);
});

test('attack: a purged conversation’s files are gone (rows and blobs): list, file and signed URL 404', async () => {
  const urls = await signedUrls(alice.key);
  const del = await fetch(`${gw.url}/v1/conversations/${conv}`, {
    method: 'DELETE',
    headers: { 'x-api-key': alice.key },
  });
  assert.equal(del.status, 200, await del.clone().text());
  assert.equal((await get(`/v1/conversations/${conv}/files`, alice.key)).status, 404);
  assert.equal((await get(fileUrl('notes.txt'), alice.key)).status, 404);
  assert.equal((await get(urls['notes.txt']!)).status, 404);
  for (const table of ['artifacts', 'workspace_blobs']) {
    const rows = await stack.db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = $1`, [
      stored,
    ]);
    assert.equal(rows.rows[0].n, 0, `${table} rows of the purged conversation`);
  }
});
