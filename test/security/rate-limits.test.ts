/**
 * Security (issue 36, holes 4, 5 and 10): rate limits that protect rather than lock out.
 *
 * - behind a TLS proxy every user shares its address: another client's failed keys from that
 *   address never refuse a valid key (once the address's failure budget is spent, guessable
 *   credentials — DREACT_API_KEYS-style keys, malformed or missing ones — get 429 before any check,
 *   while a `drk_` key is still checked and passes when valid: its prefix says it is a 256-bit
 *   secret nobody guesses), and the client's address is the one a TRUSTED proxy forwarded
 *   (X-Forwarded-For from anyone else is ignored);
 * - `/v1` and `/mcp` share ONE failed-auth budget and one budget per key (before: each had its
 *   own, doubling the guessing budget, and /mcp answered 401 after /v1 had locked the address out);
 * - a JSON-RPC batch on /mcp costs one point per call, and `start_turn` is refused inside a batch.
 *
 * Real Postgres and Temporal (test/support/stack.ts), the gateway on a loopback port (a real
 * socket, so the peer address is real: 127.0.0.1, configured as the trusted proxy).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestStack, type TestStack } from '../support/stack';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { listConversations } from '../../store/conversation-list-store';
import { parseTrustedProxies } from '../../core/net/trusted-proxies';

const POINTS = 5;
const ENV_KEY = 'rate-limits-env-key';
/** A static key of 32+ characters (unguessable): checked even from a spent address. */
const STRONG_ENV_KEY = `strong-${randomBytes(24).toString('hex')}`;
let stack: TestStack;
let valid: string;
const open: RunningGateway[] = [];

before(async () => {
  stack = await createTestStack('sec_ratelimits');
  valid = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
});
after(async () => {
  for (const gw of open) await gw.close();
  await stack?.teardown();
});

/** A fresh gateway (its own limits) behind 127.0.0.1 as the trusted proxy, or trusting none. */
async function gateway(trusted = '127.0.0.1/32'): Promise<RunningGateway> {
  const gw = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [ENV_KEY, STRONG_ENV_KEY],
    listen: false,
    web: false,
    port: 0,
    host: '127.0.0.1',
    rateLimitPerMinute: POINTS,
    trustedProxies: parseTrustedProxies(trusted),
    log: () => {},
  });
  open.push(gw);
  return gw;
}

/** A key of our shape that no row holds (what a guesser who read the docs sends). */
const wrongKey = () => `drk_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

const v1 = (gw: RunningGateway, key: string | undefined, forwardedFor?: string) =>
  fetch(`${gw.url}/v1/conversations`, {
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });

const rpc = (method: string, id: number, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

const mcp = (gw: RunningGateway, key: string | undefined, body: unknown, forwardedFor?: string) =>
  fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: JSON.stringify(body),
  });

/** The statuses of requests made one after the other. */
async function statuses(requests: Array<() => Promise<Response>>): Promise<number[]> {
  const out: number[] = [];
  for (const request of requests) {
    const res = await request();
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

test("attack: behind the shared proxy, 31 bad keys from one address lock everyone's valid key out → the valid key still works", async () => {
  const gw = await gateway();
  const proxiedUser = '198.51.100.20'; // every user of the proxy: one forwarded address
  // 31 failures from that address: malformed keys, wrong keys of our shape, missing keys.
  const bad: number[] = [];
  for (let i = 0; i < 31; i++) {
    const key = i % 3 === 0 ? `guess-${i}` : i % 3 === 1 ? wrongKey() : undefined;
    const res = await v1(gw, key, proxiedUser);
    await res.arrayBuffer();
    bad.push(res.status);
  }
  assert.ok(bad.includes(401) && bad.includes(429), `the guesser is limited: ${bad.join(',')}`);
  // The guesser's own classes are spent: another malformed key from that address → 429 before any lookup.
  assert.equal((await v1(gw, 'guess-again', proxiedUser)).status, 429);
  // A valid key from the same address (the proxy's, and the same forwarded address) works.
  const res = await v1(gw, valid, proxiedUser);
  assert.equal(res.status, 200, await res.text());
  // …on /mcp too.
  const listed = await mcp(gw, valid, rpc('tools/list', 1), proxiedUser);
  assert.equal(listed.status, 200, await listed.text());
  // A strong static key (DREACT_API_KEYS, 32+ characters) works from that address too; a short
  // one is guessable and waits out the address's window.
  const strong = await v1(gw, STRONG_ENV_KEY, proxiedUser);
  assert.equal(strong.status, 200, await strong.text());
  assert.equal((await v1(gw, ENV_KEY, proxiedUser)).status, 429);
});

test('attack: failures naming a real key id (a guesser of its secret) never refuse that key itself', async () => {
  const gw = await gateway();
  const id = valid.split('_')[1]!;
  const sameId = () => `drk_${id}_${randomBytes(32).toString('base64url')}`;
  const got = await statuses(Array.from({ length: POINTS + 3 }, () => () => v1(gw, sameId(), '198.51.100.21')));
  assert.deepEqual(got.slice(-2), [429, 429], `its failures are limited: ${got.join(',')}`);
  assert.equal((await v1(gw, valid, '198.51.100.21')).status, 200);
});

test('attack: X-Forwarded-For is believed only from a trusted proxy', async () => {
  // Trusting no proxy: a client choosing a new X-Forwarded-For per request gains no new budget.
  const direct = await gateway('');
  const got = await statuses(
    Array.from({ length: POINTS + 2 }, (_, i) => () => v1(direct, `guess-${i}`, `203.0.113.${i + 1}`)),
  );
  assert.deepEqual(got, [...Array<number>(POINTS).fill(401), 429, 429]);
  // From the trusted proxy, each forwarded address is its own client: a spent one does not spend another's.
  const proxied = await gateway();
  const spent = await statuses(
    Array.from({ length: POINTS + 1 }, (_, i) => () => v1(proxied, `guess-${i}`, '203.0.113.50')),
  );
  assert.equal(spent.at(-1), 429);
  assert.equal((await v1(proxied, 'guess-x', '203.0.113.51')).status, 401);
  // A spoofed left-most entry does not move a client to another address (the proxy appended the real one).
  assert.equal((await v1(proxied, 'guess-y', '192.0.2.1, 203.0.113.50')).status, 429);
});

test('attack: /mcp has its own failed-auth budget beside /v1 (double the guesses; 401 after /v1 locked out) → one budget', async () => {
  const gw = await gateway();
  const who = '198.51.100.30';
  const onV1 = await statuses(Array.from({ length: POINTS }, (_, i) => () => v1(gw, `guess-${i}`, who)));
  assert.deepEqual(onV1, Array<number>(POINTS).fill(401));
  const onMcp = await mcp(gw, 'guess-mcp', rpc('tools/list', 1), who);
  assert.equal(onMcp.status, 429, 'the /v1 failures spent the /mcp budget too');
  // And the other way round, on a fresh address.
  const other = '198.51.100.31';
  const viaMcp = await statuses(
    Array.from({ length: POINTS }, (_, i) => () => mcp(gw, `guess-${i}`, rpc('tools/list', i), other)),
  );
  assert.deepEqual(viaMcp, Array<number>(POINTS).fill(401));
  assert.equal((await v1(gw, 'guess-v1', other)).status, 429);
});

test("attack: a key's request budget is counted apart on /v1 and /mcp → one budget per key", async () => {
  const gw = await gateway();
  const got = await statuses([
    () => v1(gw, ENV_KEY),
    () => mcp(gw, ENV_KEY, rpc('tools/list', 1)),
    () => v1(gw, ENV_KEY),
    () => mcp(gw, ENV_KEY, rpc('tools/list', 2)),
    () => v1(gw, ENV_KEY),
    () => mcp(gw, ENV_KEY, rpc('tools/list', 3)),
    () => v1(gw, ENV_KEY),
  ]);
  assert.deepEqual(got, [200, 200, 200, 200, 200, 429, 429]);
});

test('attack: a JSON-RPC batch of calls costs one point → each call costs one', async () => {
  const gw = await gateway();
  // POINTS calls in one batch: the budget is spent by it (the request and its further calls).
  const batch = await mcp(
    gw,
    ENV_KEY,
    Array.from({ length: POINTS }, (_, i) => rpc('tools/list', i + 1)),
  );
  assert.equal(batch.status, 200, await batch.text());
  const next = await mcp(gw, ENV_KEY, rpc('tools/list', 99));
  assert.equal(next.status, 429, 'the batch spent the key’s budget');
  assert.ok(Number(next.headers.get('retry-after')) >= 1);
  // A batch larger than what is left is refused whole.
  const fresh = await gateway();
  const big = await mcp(
    fresh,
    ENV_KEY,
    Array.from({ length: POINTS + 1 }, (_, i) => rpc('tools/list', i + 1)),
  );
  assert.equal(big.status, 429);
});

test('attack: start_turn inside a JSON-RPC batch (up to 100 turns for one point) → refused, nothing written', async () => {
  const gw = await gateway();
  const acme = { tenantId: 'acme', projectId: 'web', userId: null };
  const before = (await listConversations(stack.db.pool, acme, { limit: 100 })).length;
  const calls = Array.from({ length: 3 }, (_, i) =>
    rpc('tools/call', i + 1, { name: 'start_turn', arguments: { prompt: `batched ${i}`, wait: false } }),
  );
  const res = await mcp(gw, valid, [rpc('tools/list', 0), ...calls]);
  assert.equal(res.status, 400);
  const body = (await res.json()) as { error: { message: string } };
  assert.match(body.error.message, /start_turn is refused inside a JSON-RPC batch/);
  assert.equal((await listConversations(stack.db.pool, acme, { limit: 100 })).length, before);
});
