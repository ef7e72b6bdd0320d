/**
 * Security (issue 26, defect 7): the smaller inconsistencies a probe found — a keyless token
 * request, offsets in other notations, repeated query parameters, invisible prompts, Postgres's
 * messages in a failed turn, missing security headers, and internal addresses in /config.json.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { gatewayConfigFromEnv } from '../../apps/gateway/server';
import { claimConversation } from '../../store/tenancy-store';
import { StreamPublisher } from '../../store/publisher';
import { LOCAL_TENANT } from '../../core/tenancy/principal';
import { STORE_FAILURE_MESSAGE } from '../../apps/gateway/public-errors';

const KEY = 'security-edges-key';
let stack: TestStack;
let gw: GatewayApp;
let conv: string;

before(async () => {
  stack = await createTestStack('sec_edges');
  await stack.startWorker(); // so that a turn wrongly accepted runs (and the case fails) instead of waiting
  gw = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [KEY], listen: false, pollMs: 50 });
  // A conversation of the local tenant (DREACT_API_KEYS keys keep plain ids), with no turn needed.
  conv = uniqueId('sec');
  await claimConversation(stack.db.pool, conv, { ...LOCAL_TENANT, userId: null });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const get = (path: string, headers: Record<string, string> = { 'x-api-key': KEY }) =>
  gw.fetch(new Request(`http://gw${path}`, { headers }));

async function firstChunk(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  return text;
}

test('attack: a stream token on a path without a conversation and no key → 401, not 400', async () => {
  const res = await get('/v1/conversations/stream?token=anything', {});
  assert.equal(res.status, 401);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unauthorized');
});

test('attack: Last-Event-ID and ?after in other notations (0x10, 1e3, 0b1, 1.0, +5) → 400', async () => {
  for (const bad of ['0x10', '1e3', '0b1', '1.0', '+5', ' 0o7']) {
    const res = await get(`/v1/conversations/${conv}/stream`, { 'x-api-key': KEY, 'last-event-id': bad });
    assert.equal(res.status, 400, `Last-Event-ID ${bad}`);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /Last-Event-ID/);
    const q = await get(`/v1/conversations/${conv}/stream?after=${encodeURIComponent(bad)}`);
    assert.equal(q.status, 400, `after=${bad}`);
  }
  const ok = await get(`/v1/conversations/${conv}/stream`, { 'x-api-key': KEY, 'last-event-id': '16' });
  assert.equal(ok.status, 200);
  await ok.body!.cancel();
});

test('attack: turn and round numbers in other notations (1e1 as turn 10, 10.0, " 10", +1, 0x1) → 400 naming the parameter', async () => {
  const cases: Array<[string, string, string]> = [
    ['1e1', '1', 'turn'],
    ['10.0', '1', 'turn'],
    [' 10', '1', 'turn'],
    ['+1', '1', 'turn'],
    ['0x1', '1', 'turn'],
    ['1', '1e0', 'round'],
    ['1', '1.5', 'round'],
  ];
  for (const [turn, round, name] of cases) {
    const res = await get(
      `/v1/conversations/${conv}/turns/${encodeURIComponent(turn)}/rounds/${encodeURIComponent(round)}/request`,
    );
    assert.equal(res.status, 400, `turn ${JSON.stringify(turn)} round ${JSON.stringify(round)}`);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, new RegExp(`^${name}: `));
  }
  for (const q of ['limit=1e1', 'limit=10.0', 'limit=%2010']) {
    const res = await get(`/v1/conversations?${q}`);
    assert.equal(res.status, 400, q);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /^limit: /);
  }
  assert.equal((await get('/v1/conversations?limit=10')).status, 200);
});

test('attack: repeated query parameters silently use the first value → 400 naming the parameter', async () => {
  for (const path of ['/v1/conversations?limit=1&limit=100', `/v1/conversations/${conv}/stream?after=0&after=5`]) {
    const res = await get(path);
    assert.equal(res.status, 400, path);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /(limit|after): repeated/);
  }
});

test('attack: a prompt of only invisible or control characters is accepted → 400', async () => {
  for (const prompt of ['\u200b\u200b\u2060', '\ufeff', '\u0007\u001b', ' \u00a0\u3000 ', '\u202e\u202d']) {
    const id = uniqueId('sec');
    const res = await gw.fetch(
      new Request(`http://gw/v1/conversations/${id}/turns`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      }),
    );
    assert.equal(res.status, 400, JSON.stringify(prompt));
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /prompt/);
  }
});

test("attack: a failed turn's stream carries Postgres's own message (tables, values) to the client", async () => {
  const publisher = new StreamPublisher(stack.db.pool, conv, { turnId: 'turn_1', attempt: 1 });
  const pgMessage = 'Activity task failed ← duplicate key value violates unique constraint "timeline_blocks_pkey"';
  publisher.emit({
    kind: 'phase',
    payload: { phase: 'turn.failed', turnId: 'turn_1', turnIndex: 1, error: pgMessage },
  });
  publisher.emit({
    kind: 'phase',
    payload: { phase: 'turn.failed', turnId: 'turn_1', turnIndex: 1, error: 'no model configured: name a model' },
  });
  await publisher.close();
  const res = await get(`/v1/conversations/${conv}/stream?after=0`);
  const reader = res.body!.getReader();
  let text = '';
  while ((text.match(/turn\.failed/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  assert.ok(!text.includes('timeline_blocks_pkey'), text);
  assert.ok(text.includes(STORE_FAILURE_MESSAGE), text);
  assert.ok(text.includes('no model configured: name a model'), 'our own messages pass');
});

test('attack: responses without nosniff and Referrer-Policy (JSON, errors, 404s, SSE, the web chat)', async () => {
  const responses: Array<[string, Response]> = [
    ['healthz', await get('/healthz', {})],
    ['list', await get('/v1/conversations')],
    ['401', await get('/v1/conversations', {})],
    ['404', await get('/nope')],
    ['400', await get('/v1/conversations?limit=0')],
    ['page', await get('/', {})],
    ['config', await get('/config.json', {})],
  ];
  const sse = await get(`/v1/conversations/${conv}/stream`);
  await firstChunk(sse);
  responses.push(['sse', sse]);
  for (const [name, res] of responses) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', name);
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer', name);
  }
});

test('attack: /config.json (no key needed) shows the internal Temporal UI address', async () => {
  assert.deepEqual(await (await get('/config.json', {})).json(), {}, 'nothing without a public UI URL');
  assert.equal(gatewayConfigFromEnv({ DREACT_API_KEYS: 'k' }).publicTemporalUiUrl, undefined);
  const config = gatewayConfigFromEnv({
    DREACT_API_KEYS: 'k',
    DREACT_PUBLIC_TEMPORAL_UI_URL: 'https://ui.example.com',
  });
  assert.equal(config.publicTemporalUiUrl, 'https://ui.example.com');
  const pub = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [KEY],
    listen: false,
    temporalUiUrl: config.publicTemporalUiUrl!,
  });
  try {
    const body = await (await pub.fetch(new Request('http://gw/config.json'))).json();
    assert.deepEqual(
      body,
      { temporalUiUrl: 'https://ui.example.com', temporalNamespace: 'default' },
      'only what the page reads',
    );
  } finally {
    await pub.close();
  }
});
