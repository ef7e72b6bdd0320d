/**
 * Tenancy through the gateway on real Temporal and Postgres: keys made by `dreact keys create`
 * (the CLI, against this schema), a table of every conversation endpoint × a foreign key → 404
 * with nothing changed, user-bound keys, scopes (403), revocation at once, stream tokens (no
 * header; checked on every request), and no hijacking of another tenant's conversation id.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { streamTokens } from '../../apps/gateway/stream-token';
import { conversationOwner, createApiKey, listApiKeys } from '../../store/tenancy-store';
import { ProjectIdKey, TenantIdKey } from '../../contract/definitions';
import { parseApiKey } from '../../core/tenancy/keys';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let stack: TestStack;
let gw: GatewayApp;

const dreact = (args: string[]) => runDreact(args, { env: stackCliEnv(stack) });

async function cliKey(args: string[]): Promise<string> {
  const r = await dreact(['keys', 'create', ...args]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0]!, /^created key [0-9a-f]{12} for /);
  return lines.at(-1)!;
}

const call = (method: string, path: string, key?: string, body?: unknown, extra: Record<string, string> = {}) =>
  gw.fetch(
    new Request(`http://gw${path}`, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...extra,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );

const scripted = (answer: string) => ({
  options: { model: { provider: 'scripted', script: { rounds: [complete(answer)] } } },
});

let keyA: string;
let keyB: string;

before(async () => {
  stack = await createTestStack('tenancy');
  await stack.startWorker();
  keyA = await cliKey(['--tenant', 'acme', '--project', 'web']);
  keyB = await cliKey(['--tenant', 'globex', '--project', 'app', '--scopes', 'read,write,admin']);
  gw = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    pollMs: 50,
  });
});
after(async () => {
  await gw?.close();
  await stack.teardown();
});

async function snapshot(conv: string) {
  const q = async (sql: string) => (await stack.db.pool.query(sql, [conv])).rows[0].n as number;
  return {
    blocks: await q(`SELECT count(*)::int AS n FROM timeline_blocks WHERE conversation_id = $1`),
    turns: await q(`SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1`),
    events: await q(`SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1`),
    feedback: await q(`SELECT count(*)::int AS n FROM feedback WHERE conversation_id = $1`),
    title: (await stack.db.pool.query(`SELECT title FROM conversations WHERE id = $1`, [conv])).rows[0]?.title,
    owner: await conversationOwner(stack.db.pool, conv),
  };
}

test('keys from the CLI: listed without secrets; bad input exits 2 naming the field', async () => {
  const listed = await dreact(['keys', 'list', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const rows = listed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => `${r.tenantId}/${r.projectId}`).sort(), ['acme/web', 'globex/app']);
  assert.ok(!listed.stdout.includes(parseApiKey(keyA)!.secret), 'no secret in the listing'); // whole: base64url may hold '_'
  const bad = await dreact(['keys', 'create', '--tenant', 'Bad Tenant', '--project', 'p']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /tenant: lower-case letters/);
  const scopes = await dreact(['keys', 'create', '--tenant', 't', '--project', 'p', '--scopes', 'read,root']);
  assert.equal(scopes.code, 2);
  assert.match(scopes.stderr, /scopes/);
  assert.equal((await dreact(['keys', 'revoke', '000000000000'])).code, 1);
});

test("a foreign key gets 404 on every endpoint of another tenant's conversation, and nothing changes", async () => {
  const conv = uniqueId('conv');
  const id = `acme~web~${conv}`; // stored: the gateway scopes each tenant's ids (core/tenancy/conversation-space.ts)
  const started = await call('POST', `/v1/conversations/${conv}/turns`, keyA, {
    prompt: 'hello',
    ...scripted('Hi A.'),
  });
  assert.equal(started.status, 202, await started.clone().text());
  await stack.client.result(id, 1);
  await waitFor('turn released', async () => (await stack.client.conversationState(id)).activeTurn === null);
  assert.deepEqual(await conversationOwner(stack.db.pool, id), { tenantId: 'acme', projectId: 'web', userId: null });
  // Search attributes and the fairness key of the conversation and its turn come from the key.
  for (const workflowId of [`conv/${id}`, `conv/${id}/turn/1`]) {
    const desc = await stack.server.env.client.workflow.getHandle(workflowId).describe();
    assert.equal(desc.typedSearchAttributes.get(TenantIdKey), 'acme', workflowId);
    assert.equal(desc.typedSearchAttributes.get(ProjectIdKey), 'web', workflowId);
    assert.equal(desc.raw.workflowExecutionInfo?.priority?.fairnessKey, 'acme', workflowId);
  }
  await waitFor('visibility to list the turn by tenant', async () => {
    let n = 0;
    for await (const w of stack.server.env.client.workflow.list({
      query: `TenantId = "acme" AND ConversationId = "${id}"`,
    }))
      if (w.workflowId) n++;
    return n === 2;
  });
  const before = await snapshot(id);
  const alice = (
    await createApiKey(stack.db.pool, {
      tenantId: 'acme',
      projectId: 'web',
      userId: 'alice',
      scopes: ['read', 'write'],
    })
  ).key;
  const otherProject = (
    await createApiKey(stack.db.pool, {
      tenantId: 'acme',
      projectId: 'mobile',
      userId: null,
      scopes: ['read', 'write'],
    })
  ).key;
  const endpoints: Array<[string, string, unknown?]> = [
    ['POST', `/v1/conversations/${conv}/steer`, { text: 'stop' }],
    ['POST', `/v1/conversations/${conv}/followup`, { text: 'more' }],
    ['GET', `/v1/conversations/${conv}/state`],
    ['GET', `/v1/conversations/${conv}/timeline`],
    ['GET', `/v1/conversations/${conv}/stream`],
    ['POST', `/v1/conversations/${conv}/stream-token`, {}],
    ['GET', `/v1/conversations/${conv}`],
    ['PATCH', `/v1/conversations/${conv}`, { title: 'renamed by another tenant' }],
    ['GET', `/v1/conversations/${conv}/export`],
    ['GET', `/v1/conversations/${conv}/usage`],
    ['GET', `/v1/conversations/${conv}/feedback`],
    ['POST', `/v1/conversations/${conv}/feedback`, { turnIndex: 1, rating: 'down' }],
    ['DELETE', `/v1/conversations/${conv}`],
  ];
  for (const [label, key] of [
    ['another tenant', keyB],
    ['another project of the tenant', otherProject],
    ['a key bound to another user', alice],
  ] as const)
    for (const [method, path, body] of endpoints) {
      const res = await call(method, path, key, body);
      const text = await res.text();
      assert.equal(res.status, 404, `${label}: ${method} ${path} → ${res.status} ${text}`);
      assert.equal(JSON.parse(text).error.message, `no conversation "${conv}"`, 'indistinguishable from absent');
    }
  assert.deepEqual(await snapshot(id), before, 'nothing changed');
  // Lists never show it either.
  for (const key of [keyB, alice, otherProject]) {
    const listed = (await (await call('GET', '/v1/conversations', key)).json()) as {
      conversations: Array<{ id: string }>;
    };
    assert.ok(!listed.conversations.some((c) => c.id === conv));
  }
  // The owner's key still sees it all.
  assert.equal((await call('GET', `/v1/conversations/${conv}/state`, keyA)).status, 200);
  assert.equal((await call('GET', `/v1/conversations/${conv}/timeline`, keyA)).status, 200);
  // A turn on the same id from another tenant starts a conversation of its own, in its own space.
  const theirs = await call('POST', `/v1/conversations/${conv}/turns`, keyB, {
    prompt: 'take over',
    ...scripted('B.'),
  });
  assert.equal(theirs.status, 202, await theirs.clone().text());
  assert.equal(
    ((await theirs.json()) as { conversationId: string }).conversationId,
    conv,
    'shown as the client named it',
  );
  await stack.client.result(`globex~app~${conv}`, 1);
  assert.deepEqual(await snapshot(id), before, "acme's conversation is untouched");
});

test('a user-bound key sees only its user’s conversations; scopes are enforced (403); revocation is immediate', async () => {
  const bob = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: 'bob', scopes: ['read', 'write'] })
  ).key;
  const conv = uniqueId('conv');
  assert.equal(
    (await call('POST', `/v1/conversations/${conv}/turns`, bob, { prompt: 'mine', ...scripted('Yours.') })).status,
    202,
  );
  const id = `acme~web~bob~${conv}`; // a user-bound key's ids are scoped to its user
  await stack.client.result(id, 1);
  assert.deepEqual(await conversationOwner(stack.db.pool, id), { tenantId: 'acme', projectId: 'web', userId: 'bob' });
  assert.equal(
    (await call('GET', `/v1/conversations/bob~${conv}/state`, keyA)).status,
    200,
    'the project key sees its users’ conversations (named relative to its space)',
  );

  const readOnly = await createApiKey(stack.db.pool, {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
    scopes: ['read'],
  });
  assert.equal((await call('GET', `/v1/conversations/bob~${conv}/state`, readOnly.key)).status, 200);
  const write = await call('POST', `/v1/conversations/bob~${conv}/followup`, readOnly.key, { text: 'more' });
  assert.equal(write.status, 403);
  assert.match(((await write.json()) as { error: { message: string } }).error.message, /lacks the "write" scope/);

  const revoked = await dreact(['keys', 'revoke', readOnly.id]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const after = await call('GET', `/v1/conversations/bob~${conv}/state`, readOnly.key);
  assert.equal(after.status, 401);
  assert.match(((await after.json()) as { error: { message: string } }).error.message, /invalid or revoked/);
  const rows = await listApiKeys(stack.db.pool, { tenantId: 'acme' });
  assert.ok(rows.find((r) => r.id === readOnly.id)?.revokedAt);
  assert.equal(
    (await call('GET', `/v1/conversations/${conv}/state`, 'drk_000000000000_' + 'x'.repeat(43))).status,
    401,
  );
});

test('stream tokens: EventSource-style access without headers, bound to conversation and tenant, checked on every request', async () => {
  const conv = uniqueId('conv');
  const other = uniqueId('conv');
  for (const c of [conv, other])
    assert.equal(
      (await call('POST', `/v1/conversations/${c}/turns`, keyA, { prompt: 'hi', ...scripted('Hello.') })).status,
      202,
    );
  await stack.client.result(`acme~web~${conv}`, 1);
  const issued = (await (await call('POST', `/v1/conversations/${conv}/stream-token`, keyA, {})).json()) as {
    token: string;
    stream: string;
  };
  const open = await call('GET', `${issued.stream}&after=0`);
  assert.equal(open.status, 200);
  const reader = open.body!.getReader();
  let text = '';
  while (!text.includes('event: ')) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const refusals: Array<[string, RegExp]> = [
    [`/v1/conversations/${other}/stream?token=${encodeURIComponent(issued.token)}`, /another conversation/],
    [
      `/v1/conversations/${conv}/stream?token=${encodeURIComponent(issued.token.slice(0, -2) + 'xx')}`,
      /invalid stream token/,
    ],
    [`/v1/conversations/${conv}/stream?token=garbage`, /malformed stream token/],
  ];
  for (const [path, re] of refusals) {
    const res = await call('GET', path);
    assert.equal(res.status, 401, path);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, re);
  }
  // Expiry, and a token naming a tenant that does not own the conversation (forged with the secret).
  const t = streamTokens('secret', 1000);
  const owner = { tenantId: 'acme', projectId: 'web', userId: null, keyId: 'k', scopes: ['read' as const] };
  const old = t.issue(owner, conv, Date.now() - 5000);
  assert.match(JSON.stringify(t.verify(old.token, conv)), /expired/);
  const signed = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
    tokenSecret: 'secret',
  });
  // A globex token for acme's stored id lies outside globex's id space; one for the plain id (the
  // form of conversations made before ids were scoped) reaches the owner check.
  const globex = { ...owner, tenantId: 'globex', projectId: 'app' };
  const stream = (token: string) =>
    signed.fetch(new Request(`http://gw/v1/conversations/${conv}/stream?token=${encodeURIComponent(token)}`));
  assert.equal((await stream(t.issue(globex, `acme~web~${conv}`).token)).status, 401, 'not its id space');
  assert.equal((await stream(t.issue(globex, conv).token)).status, 404, 'the owner is checked again');
  await signed.close();
});

test("another tenant cannot claim an existing conversation id; a new id becomes the caller's", async () => {
  const conv = uniqueId('conv');
  assert.equal(
    (await call('POST', `/v1/conversations/${conv}/turns`, keyB, { prompt: 'first', ...scripted('B.') })).status,
    202,
  );
  // The same id from acme names acme's own conversation: globex's is neither taken nor visible.
  const mine = await call('POST', `/v1/conversations/${conv}/turns`, keyA, { prompt: 'mine now', ...scripted('A.') });
  assert.equal(mine.status, 202);
  assert.deepEqual(await conversationOwner(stack.db.pool, `globex~app~${conv}`), {
    tenantId: 'globex',
    projectId: 'app',
    userId: null,
  });
  assert.deepEqual(await conversationOwner(stack.db.pool, `acme~web~${conv}`), {
    tenantId: 'acme',
    projectId: 'web',
    userId: null,
  });
  // A request that is refused as bad input claims nothing.
  const fresh = uniqueId('conv');
  assert.equal((await call('POST', `/v1/conversations/${fresh}/turns`, keyA, { prompt: '   ' })).status, 400);
  assert.equal(await conversationOwner(stack.db.pool, `acme~web~${fresh}`), undefined);
});
