/**
 * Gateway hardening on real Postgres and Temporal: request ids on every response, error body and
 * log line; one structured JSON log line per request; the CORS allow-list; rate limits per key
 * (429 + Retry-After, other keys unaffected); body limits per route; /healthz and /readyz (503
 * naming what is down); SSE fan-out with shared reads (every event once per stream).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Pool } from 'pg';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';
import { claimConversation } from '../../store/tenancy-store';
import { StreamPublisher } from '../../store/publisher';
import { parseSse } from '../../client/sse-client';
import { parseApiKey } from '../../core/tenancy/keys';

let stack: TestStack;
let gw: GatewayApp;
let key: string;
let other: string;
const lines: Array<Record<string, unknown>> = [];

before(async () => {
  stack = await createTestStack('hardening');
  key = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
  other = (await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read'] }))
    .key;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  gw = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    corsOrigins: ['https://chat.example.com'],
    rateLimitPerMinute: 5,
    logger: pino({}, sink),
  });
});
after(async () => {
  await gw?.close();
  await stack.teardown();
});

const req = (path: string, init: RequestInit = {}) => gw.fetch(new Request(`http://gw${path}`, init));

test('request ids on responses, error bodies and JSON log lines', async () => {
  const res = await req('/v1/conversations/nope/state', { headers: { 'x-api-key': key } });
  assert.equal(res.status, 404);
  const id = res.headers.get('x-request-id');
  assert.match(id ?? '', /^[0-9a-f-]{36}$/);
  const body = (await res.json()) as { error: { code: string; requestId: string } };
  assert.equal(body.error.requestId, id);
  const echoed = await req('/healthz', { headers: { 'x-request-id': 'trace-abc-123' } });
  assert.equal(echoed.headers.get('x-request-id'), 'trace-abc-123', "a caller's id is kept");
  const line = lines.find((l) => l.requestId === id);
  assert.ok(line, JSON.stringify(lines));
  assert.deepEqual(
    [line.method, line.path, line.status, line.tenant, line.project, typeof line.ms],
    ['GET', '/v1/conversations/nope/state', 404, 'acme', 'web', 'number'],
  );
  // The whole secret: base64url may hold '_', and a fragment of it can match any log text by chance.
  assert.ok(!JSON.stringify(lines).includes(parseApiKey(key)!.secret), 'no key secret in the logs');
});

test('CORS: an allowed origin gets the headers; any other origin none', async () => {
  const pre = await req('/v1/conversations', {
    method: 'OPTIONS',
    headers: {
      origin: 'https://chat.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-api-key, content-type',
    },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://chat.example.com');
  assert.match(pre.headers.get('access-control-allow-headers') ?? '', /x-api-key/);
  const evil = await req('/v1/conversations', { headers: { origin: 'https://evil.example', 'x-api-key': key } });
  assert.equal(evil.headers.get('access-control-allow-origin'), null);
});

test('rate limit per key: 429 with Retry-After; another key is unaffected', async () => {
  const limited = uniqueId('k');
  const k = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: limited, userId: null, scopes: ['read'] })
  ).key;
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < 7; i++) {
    last = await req('/v1/conversations', { headers: { 'x-api-key': k } });
    statuses.push(last.status);
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
  const retry = Number(last!.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, String(retry));
  const body = (await last!.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'rate_limited');
  assert.match(body.error.message, /5 requests per key/);
  assert.equal((await req('/v1/conversations', { headers: { 'x-api-key': other } })).status, 200);
});

test('body limits per route: small routes refuse what a turn may carry', async () => {
  const conv = uniqueId('conv');
  await claimConversation(stack.db.pool, conv, { tenantId: 'acme', projectId: 'web', userId: null });
  const big = JSON.stringify({ title: 'x'.repeat(20_000) });
  const rename = await req(`/v1/conversations/${conv}`, {
    method: 'PATCH',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: big,
  });
  assert.equal(rename.status, 413);
  assert.equal(((await rename.json()) as { error: { code: string } }).error.code, 'too_large');
  // The same size as a turn's prompt is within the turn's limit (refused for its own reason, not its size).
  const turn = await req(`/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'x'.repeat(20_000), options: { maxIterations: -1 } }),
  });
  assert.equal(turn.status, 400);
});

test('/healthz always; /readyz checks Postgres and Temporal and says which is down', async () => {
  assert.equal((await req('/healthz')).status, 200);
  const ready = await req('/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { ok: true, postgres: 'ok', temporal: 'ok' });
  const deadPool = new Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 500 });
  deadPool.on('error', () => undefined);
  const down = await createGatewayApp({ client: stack.client, pool: deadPool, apiKeys: ['k'], listen: false });
  const res = await down.fetch(new Request('http://gw/readyz'));
  assert.equal(res.status, 503);
  const body = (await res.json()) as { ok: boolean; postgres: string; temporal: string };
  assert.equal(body.ok, false);
  assert.match(body.postgres, /^failed: /);
  assert.equal(body.temporal, 'ok');
  await down.close();
  await deadPool.end();
});

test('fan-out: 30 streams of one conversation read shared batches and each gets every event exactly once', async () => {
  const conv = uniqueId('conv');
  await claimConversation(stack.db.pool, conv, { tenantId: 'acme', projectId: 'web', userId: null });
  const listening = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [], listen: true });
  const abort = new AbortController();
  try {
    const readers = Array.from({ length: 30 }, async () => {
      const res = await listening.fetch(
        new Request(`http://gw/v1/conversations/${conv}/stream?after=0`, {
          headers: { 'x-api-key': key },
          signal: abort.signal,
        }),
      );
      const ids: string[] = [];
      for await (const e of parseSse(res.body!)) {
        if (e.id) ids.push(e.id);
        if ((JSON.parse(e.data) as { last?: boolean }).last) break;
      }
      return ids;
    });
    await new Promise((r) => setTimeout(r, 300));
    const publisher = new StreamPublisher(stack.db.pool, conv, { turnId: 'turn_1', attempt: 1 });
    for (let i = 0; i < 40; i++) {
      publisher.emit({ kind: 'delta', channel: 'answer', payload: { text: `t${i}`, round: 1, last: i === 39 } });
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 30));
    }
    await publisher.close();
    const got = await Promise.all(readers);
    for (const ids of got) {
      assert.equal(ids.length, 40);
      assert.equal(new Set(ids).size, 40);
    }
  } finally {
    abort.abort();
    await listening.close();
  }
});
