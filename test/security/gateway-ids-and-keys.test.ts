/**
 * Security (issue 26, defects 5 and 6): conversation ids and API keys. A foreign and a missing id
 * answer alike whatever the body (no existence oracle), each tenant has its own id space (no
 * squatting), a wrong secret never touches a key's row, failed authentication is rate-limited
 * before any key is looked up, and revoking a key ends its stream tokens and its open streams.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { conversationOwner, createApiKey, listApiKeys, revokeApiKey } from '../../store/tenancy-store';
import { parseApiKey } from '../../core/tenancy/keys';

let stack: TestStack;
let gw: GatewayApp;
let keyA: string;
let keyB: string;

before(async () => {
  stack = await createTestStack('sec_ids');
  await stack.startWorker();
  keyA = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
  keyB = (
    await createApiKey(stack.db.pool, { tenantId: 'globex', projectId: 'app', userId: null, scopes: ['read', 'write'] })
  ).key;
  gw = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
    streamRecheckMs: 200,
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const call = (app: GatewayApp, method: string, path: string, key?: string, body?: unknown) =>
  app.fetch(
    new Request(`http://gw${path}`, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );

async function started(key: string): Promise<string> {
  const conv = uniqueId('sec');
  const res = await call(gw, 'POST', `/v1/conversations/${conv}/turns`, key, { prompt: 'hello' });
  assert.equal(res.status, 202, await res.clone().text());
  return conv;
}

/** Reads an SSE body until it ends or `ms` pass; whether it ended, and what it said. */
async function readFor(res: Response, ms: number): Promise<{ ended: boolean; text: string }> {
  const reader = res.body!.getReader();
  let text = '';
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) {
      await reader.cancel();
      return { ended: false, text };
    }
    const next = await Promise.race([
      reader.read(),
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), left)),
    ]);
    if (next === 'timeout') continue;
    if (next.done) return { ended: true, text };
    text += new TextDecoder().decode(next.value);
  }
}

test('attack: id oracle — a bad body to a foreign id and to a missing id get the same answer', async () => {
  const theirs = await started(keyA);
  const missing = uniqueId('sec');
  for (const body of [{ prompt: 42 }, { prompt: 'x', options: { model: { foo: 1 } } }, { nope: true }]) {
    const a = await call(gw, 'POST', `/v1/conversations/${theirs}/turns`, keyB, body);
    const b = await call(gw, 'POST', `/v1/conversations/${missing}/turns`, keyB, body);
    type ErrorBody = { error: { code: string; message: string } };
    const [ja, jb] = [(await a.json()) as ErrorBody, (await b.json()) as ErrorBody];
    assert.equal(a.status, b.status, JSON.stringify(body));
    assert.deepEqual([ja.error.code, ja.error.message], [jb.error.code, jb.error.message], JSON.stringify(body));
  }
  // Reads and events alike: the foreign id and the missing one are the same 404.
  for (const [method, suffix, body] of [
    ['GET', '/state', undefined],
    ['POST', '/steer', { text: 'stop' }],
    ['POST', '/followup', { text: 42 }],
    ['GET', '/stream', undefined],
  ] as const) {
    const a = await call(gw, method, `/v1/conversations/${theirs}${suffix}`, keyB, body);
    const b = await call(gw, method, `/v1/conversations/${missing}${suffix}`, keyB, body);
    assert.equal(a.status, b.status, `${method} ${suffix}`);
    const [ta, tb] = [await a.text(), await b.text()];
    assert.equal(
      JSON.parse(ta).error.message.replace(theirs, 'ID'),
      JSON.parse(tb).error.message.replace(missing, 'ID'),
      `${method} ${suffix}`,
    );
  }
});

test("attack: id squatting — another tenant takes an id first; the victim's turn on it still starts its own conversation", async () => {
  const id = uniqueId('sec');
  const squat = await call(gw, 'POST', `/v1/conversations/${id}/turns`, keyB, { prompt: 'mine first' });
  assert.equal(squat.status, 202);
  const victim = await call(gw, 'POST', `/v1/conversations/${id}/turns`, keyA, { prompt: 'my conversation' });
  assert.equal(victim.status, 202, await victim.clone().text());
  assert.equal(((await victim.json()) as { conversationId: string }).conversationId, id);
  assert.equal((await call(gw, 'GET', `/v1/conversations/${id}`, keyA)).status, 200);
  const listedB = (await (await call(gw, 'GET', '/v1/conversations', keyB)).json()) as { conversations: unknown[] };
  assert.ok(!JSON.stringify(listedB).includes('acme'), "B's list shows nothing of A's");
  assert.deepEqual((await conversationOwner(stack.db.pool, `acme~web~${id}`))?.tenantId, 'acme');
  // A scoped id cannot be created by naming it: `~` names an existing conversation only.
  const forged = await call(gw, 'POST', `/v1/conversations/${encodeURIComponent('acme~web~x')}/turns`, keyB, {
    prompt: 'x',
  });
  assert.equal(forged.status, 404);
});

test('attack: a wrong secret for a known key id refreshes last_used_at', async () => {
  const made = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
    scopes: ['read'],
  });
  const { id, secret } = parseApiKey(made.key)!;
  const wrong = made.key.replace(secret, (secret[0] === 'A' ? 'B' : 'A') + secret.slice(1));
  const res = await call(gw, 'GET', '/v1/conversations', wrong);
  assert.equal(res.status, 401);
  const row = (await listApiKeys(stack.db.pool, { tenantId: 'acme' })).find((r) => r.id === id);
  assert.equal(row?.lastUsedAt, null, 'a wrong secret writes nothing');
  assert.equal((await call(gw, 'GET', '/v1/conversations', made.key)).status, 200);
  const used = (await listApiKeys(stack.db.pool, { tenantId: 'acme' })).find((r) => r.id === id);
  assert.ok(used?.lastUsedAt, 'the right secret does');
});

test('attack: guessing keys is never rate-limited — 25 bad-key requests on a gateway limited to 20/min', async () => {
  const limited = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    rateLimitPerMinute: 20,
  });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const guess = `drk_${i.toString(16).padStart(12, '0')}_${'x'.repeat(43)}`;
      statuses.push((await call(limited, 'GET', '/v1/conversations', i % 2 ? guess : 'not-a-key')).status);
    }
    assert.deepEqual(statuses.slice(0, 20), Array(20).fill(401));
    assert.deepEqual(statuses.slice(20), Array(5).fill(429));
    const res = await call(limited, 'GET', '/v1/conversations', 'still-guessing');
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  } finally {
    await limited.close();
  }
});

test("attack: a stream token outlives its key's revocation", async () => {
  const made = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
    scopes: ['read', 'write'],
  });
  const conv = await started(made.key);
  const issued = (await (await call(gw, 'POST', `/v1/conversations/${conv}/stream-token`, made.key, {})).json()) as {
    stream: string;
  };
  const before = await call(gw, 'GET', issued.stream);
  assert.equal(before.status, 200);
  await before.body!.cancel();
  assert.ok(await revokeApiKey(stack.db.pool, parseApiKey(made.key)!.id));
  const after = await call(gw, 'GET', issued.stream);
  assert.equal(after.status, 401);
  assert.match(((await after.json()) as { error: { message: string } }).error.message, /revoked/);
});

test('attack: open streams of a revoked key keep flowing — they end within the re-check interval', async () => {
  const made = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
    scopes: ['read', 'write'],
  });
  const conv = await started(made.key);
  const issued = (await (await call(gw, 'POST', `/v1/conversations/${conv}/stream-token`, made.key, {})).json()) as {
    stream: string;
  };
  const byKey = await call(gw, 'GET', `/v1/conversations/${conv}/stream`, made.key);
  const byToken = await call(gw, 'GET', issued.stream);
  assert.deepEqual([byKey.status, byToken.status], [200, 200]);
  await revokeApiKey(stack.db.pool, parseApiKey(made.key)!.id);
  const [k, t] = await Promise.all([readFor(byKey, 5000), readFor(byToken, 5000)]);
  for (const [name, r] of [
    ['key', k],
    ['token', t],
  ] as const) {
    assert.ok(r.ended, `the ${name} stream ended`);
    assert.match(r.text, /event: error\ndata: .*"code":"unauthorized"/, name);
  }
  await waitFor('the streams to be closed', async () => gw.activeStreams() === 0);
});
