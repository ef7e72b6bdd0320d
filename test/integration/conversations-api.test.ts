/**
 * The conversations API through the gateway on real Temporal and Postgres: a tenant's list
 * (paged, newest first, titles, turn counts, status), get with usage, rename, export as
 * conv.timeline.v1, delete (a purge workflow stops a running turn and removes every row; a second
 * delete is a 404), usage per tenant and day for admin keys, feedback (stored, queryable, shown to
 * the next turn), a search on the server (`?q=`, beyond the first page), and bad input refused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { claimConversation, createApiKey } from '../../store/tenancy-store';
import { renameConversation } from '../../store/conversation-list-store';
import { loadBlocks } from '../../store/timeline-store';
import { visibleItems } from '../../core/timeline/render';

let stack: TestStack;
let gw: GatewayApp;
let keyA: string;
let keyB: string;
/** The stored id of a client's conversation id: the gateway scopes ids per tenant and project. */
const stored = (conv: string, key = keyA) => `${key === keyB ? 'globex~app' : 'acme~web'}~${conv}`;
let adminA: string;

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const res = await gw.fetch(
    new Request(`http://gw${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

const turn = (answer: string, latencyMs = 0) => ({
  options: {
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          callTool('react.write', { path: 'notes.md', channel: 'internal', content: 'n', kind: 'file' }),
          complete(answer),
        ],
        latencyMs,
        structured: { conversation_title: { title: `About ${answer}` } },
      },
    },
  },
});

async function converse(key: string, conv: string, answer: string): Promise<void> {
  const r = await call('POST', `/v1/conversations/${conv}/turns`, key, {
    prompt: `tell me ${answer}`,
    ...turn(answer),
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  await stack.client.result(stored(conv, key), 1);
  await waitFor('released', async () => (await stack.client.conversationState(stored(conv, key))).activeTurn === null);
}

before(async () => {
  stack = await createTestStack('convapi');
  await stack.startWorker();
  keyA = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })
  ).key;
  adminA = (await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['admin'] }))
    .key;
  keyB = (
    await createApiKey(stack.db.pool, { tenantId: 'globex', projectId: 'app', userId: null, scopes: ['read', 'write'] })
  ).key;
  gw = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    listen: false,
  });
});
after(async () => {
  await gw?.close();
  await stack.teardown();
});

const counts = async (conv: string) => {
  const out: Record<string, number> = {};
  for (const table of [
    'conversations',
    'timeline_blocks',
    'artifacts',
    'stream_events',
    'usage_ledger',
    'turns',
    'memory_entries',
  ]) {
    const col = table === 'conversations' ? 'id' : 'conversation_id';
    out[table] = (
      await stack.db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${col} = $1`, [stored(conv)])
    ).rows[0].n;
  }
  return out;
};

test('list, get, rename, export and usage, each scoped to the tenant', async () => {
  const convs = [uniqueId('conv'), uniqueId('conv'), uniqueId('conv')];
  for (const [i, conv] of convs.entries()) await converse(keyA, conv, `topic ${i}`);
  const theirs = uniqueId('conv');
  await converse(keyB, theirs, 'their topic');

  const page1 = await call('GET', '/v1/conversations?limit=2', keyA);
  assert.equal(page1.status, 200);
  assert.deepEqual(
    page1.body.conversations.map((c: { id: string }) => c.id),
    [convs[2], convs[1]],
    'newest activity first',
  );
  const first = page1.body.conversations[0];
  assert.equal(first.title, 'About topic 2');
  assert.equal(first.turnCount, 1);
  assert.equal(first.status, 'idle');
  assert.ok(Date.parse(first.lastActivity) >= Date.parse(first.createdAt));
  const page2 = await call('GET', `/v1/conversations?limit=2&cursor=${page1.body.nextCursor}`, keyA);
  assert.deepEqual(
    page2.body.conversations.map((c: { id: string }) => c.id),
    [convs[0]],
  );
  assert.equal(page2.body.nextCursor, null);
  const b = await call('GET', '/v1/conversations', keyB);
  assert.deepEqual(
    b.body.conversations.map((c: { id: string }) => c.id),
    [theirs],
    'another tenant lists only its own',
  );

  const got = await call('GET', `/v1/conversations/${convs[0]}`, keyA);
  assert.equal(got.status, 200);
  assert.ok(got.body.usage.calls >= 2, JSON.stringify(got.body.usage));
  assert.equal((await call('GET', `/v1/conversations/${convs[0]}`, keyB)).status, 404);

  const renamed = await call('PATCH', `/v1/conversations/${convs[0]}`, keyA, { title: '  Renamed  ' });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.title, 'Renamed');
  assert.equal((await call('PATCH', `/v1/conversations/${convs[0]}`, keyB, { title: 'x' })).status, 404);
  assert.equal((await call('GET', `/v1/conversations/${convs[0]}`, keyA)).body.title, 'Renamed');

  const exported = await call('GET', `/v1/conversations/${convs[0]}/export`, keyA);
  assert.equal(exported.status, 200);
  assert.equal(exported.body.kind, 'conv.timeline.v1');
  assert.equal(exported.body.version, 1);
  assert.equal(exported.body.conversation_title, 'Renamed');
  assert.ok(exported.body.blocks.some((bl: { type: string }) => bl.type === 'user.prompt'));
  assert.equal((await call('GET', `/v1/conversations/${convs[0]}/export`, keyB)).status, 404);

  const usage = await call('GET', `/v1/conversations/${convs[1]}/usage`, keyA);
  assert.ok(usage.body.calls >= 2);
  assert.equal((await call('GET', '/v1/usage', keyA)).status, 403, 'tenant usage needs admin');
  const tenant = await call('GET', '/v1/usage?days=7', adminA);
  assert.equal(tenant.status, 200);
  assert.equal(tenant.body.tenantId, 'acme');
  const today = tenant.body.days.find((d: { projectId: string }) => d.projectId === 'web');
  assert.ok(today && today.calls >= 6, JSON.stringify(tenant.body));
  assert.ok(!JSON.stringify(tenant.body).includes('globex'));
});

test('delete: a purge workflow stops the running turn and removes every row; a second delete is a 404', async () => {
  const conv = uniqueId('conv');
  await converse(keyA, conv, 'to delete');
  const slow = await call('POST', `/v1/conversations/${conv}/followup`, keyA, { text: 'go on' });
  assert.equal(slow.status, 202);
  assert.ok(
    Object.values(await counts(conv)).every((n) => n > 0),
    JSON.stringify(await counts(conv)),
  );
  assert.equal((await call('DELETE', `/v1/conversations/${conv}`, keyB)).status, 404);

  const running = uniqueId('conv');
  const started = await call('POST', `/v1/conversations/${running}/turns`, keyA, {
    prompt: 'long one',
    ...turn('slow', 2000),
  });
  assert.equal(started.status, 202);
  await waitFor('the turn to run', async () => {
    const d = await stack.server.env.client.workflow
      .getHandle(`conv/${stored(running)}/turn/1`)
      .describe()
      .catch(() => undefined);
    return d?.status.name === 'RUNNING';
  });
  for (const id of [conv, running]) {
    const deleted = await call('DELETE', `/v1/conversations/${id}`, keyA);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.deepEqual(deleted.body, { conversationId: id, deleted: true, workflowId: `purge/${stored(id)}` });
  }
  await waitFor(
    'the running turn to stop (cancelled with its conversation)',
    async () =>
      (await stack.server.env.client.workflow.getHandle(`conv/${stored(running)}/turn/1`).describe()).status.name !==
      'RUNNING',
    20_000,
  );
  await stack.server.env.client.workflow.getHandle(`purge/${stored(running)}`).result();
  for (const id of [conv, running])
    assert.ok(
      Object.values(await counts(id)).every((n) => n === 0),
      `${id}: ${JSON.stringify(await counts(id))}`,
    );
  const again = await call('DELETE', `/v1/conversations/${conv}`, keyA);
  assert.equal(again.status, 404);
  assert.equal(again.body.error.message, `no conversation "${conv}"`);
});

test('bad input to the conversations API: a clear JSON error and nothing written', async () => {
  const conv = uniqueId('conv');
  await converse(keyA, conv, 'bad input');
  const cases: Array<[string, string, unknown, number, RegExp]> = [
    ['GET', '/v1/conversations?limit=0', undefined, 400, /limit/],
    ['GET', '/v1/conversations?limit=1000', undefined, 400, /limit/],
    ['GET', '/v1/conversations?cursor=garbage', undefined, 400, /cursor/],
    ['GET', '/v1/conversations?sort=asc', undefined, 400, /sort/],
    ['PATCH', `/v1/conversations/${conv}`, { title: '   ' }, 400, /title is empty/],
    ['PATCH', `/v1/conversations/${conv}`, { title: 'x'.repeat(201) }, 400, /too long/],
    ['PATCH', `/v1/conversations/${conv}`, { name: 'x' }, 400, /title is required/],
    ['PATCH', `/v1/conversations/${encodeURIComponent('bad id!')}`, { title: 'x' }, 400, /ids use letters/],
    ['DELETE', `/v1/conversations/${uniqueId('never')}`, undefined, 404, /no conversation/],
    ['GET', '/v1/usage?days=0', undefined, 403, /admin/],
  ];
  for (const [method, path, body, status, re] of cases) {
    const r = await call(method, path, keyA, body);
    assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error.message, re);
  }
  assert.equal((await call('GET', '/v1/usage?days=0', adminA)).status, 400);
  assert.equal((await call('GET', `/v1/conversations/${conv}`, keyA)).body.title, 'About bad input', 'nothing renamed');
});

test('feedback: stored from the key, queryable, on the timeline for the next turn; refused input writes nothing', async () => {
  const conv = uniqueId('conv');
  await converse(keyA, conv, 'feedback');
  const body = { turnIndex: 1, target: 'completion', rating: 'down', text: 'too long', feedbackId: 'fb_test_0001' };
  const first = await call('POST', `/v1/conversations/${conv}/feedback`, keyA, body);
  assert.equal(first.status, 201, JSON.stringify(first.body));
  const again = await call('POST', `/v1/conversations/${conv}/feedback`, keyA, body);
  assert.equal(again.status, 200);
  assert.equal(again.body.created, false, 'a retried POST writes nothing new');
  const refused: Array<[unknown, number, RegExp, string?]> = [
    [{ ...body, feedbackId: undefined, rating: 'meh' }, 400, /rating must be "ok", "not_ok", "neutral"/],
    [{ ...body, feedbackId: undefined, turnIndex: 9 }, 404, /has no turn 9/],
    [{ ...body, feedbackId: undefined, tenantId: 'globex' }, 400, /tenantId/],
    [{ ...body, feedbackId: undefined, text: 'x'.repeat(2001) }, 400, /too long/],
    [{ ...body, feedbackId: undefined }, 404, /no conversation/, keyB],
  ];
  for (const [b, status, re, key] of refused) {
    const r = await call('POST', `/v1/conversations/${conv}/feedback`, key ?? keyA, b);
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.match(r.body.error.message, re);
  }
  const listed = await call('GET', `/v1/conversations/${conv}/feedback`, keyA);
  assert.equal(listed.body.feedback.length, 1);
  assert.deepEqual(
    { ...listed.body.feedback[0], createdAt: undefined },
    {
      feedbackId: 'fb_test_0001',
      conversationId: conv,
      turnId: 'turn_1',
      target: 'completion',
      rating: 'not_ok', // `down` is an alias
      text: 'too long',
      userId: null,
      origin: 'user',
      source: null,
      createdAt: undefined,
    },
  );
  const tenantDown = await call('GET', '/v1/feedback?rating=down', keyA);
  assert.ok(tenantDown.body.feedback.some((f: { feedbackId: string }) => f.feedbackId === 'fb_test_0001'));
  assert.deepEqual((await call('GET', '/v1/feedback', keyB)).body.feedback, [], 'another tenant sees none');
  const blocks = await loadBlocks(stack.db.pool, stored(conv));
  assert.equal(blocks.filter((b) => b.type === 'user.feedback').length, 1);

  // The next turn's render shows it, after turn 1's answer.
  const next = await call('POST', `/v1/conversations/${conv}/turns`, keyA, { prompt: 'shorter please', ...turn('ok') });
  assert.equal(next.status, 202);
  await stack.client.result(stored(conv), 2);
  const view = visibleItems(await loadBlocks(stack.db.pool, stored(conv)), 'turn_2').map((it) => it.text);
  const at = view.findIndex((t) => t.includes('[USER FEEDBACK: thumbs down on the answer of turn_1]'));
  assert.ok(at >= 0, view.join('\n---\n'));
  assert.match(view[at]!, /too long/);
  assert.ok(view.findIndex((t) => t.includes('TURN turn_2')) > at, 'shown before turn 2 starts');
});

test('?q= searches all of the tenant’s conversations on the server: title or id, case-insensitive, no wildcards', async () => {
  const tag = uniqueId('q').slice(-8);
  const mine = { tenantId: 'acme', projectId: 'web', userId: null };
  // The needle is the oldest of 60: past the first page of 50 the sidebar lists.
  const needle = `trip-${tag}`;
  const ids = [needle, ...Array.from({ length: 59 }, (_, i) => `filler-${tag}-${i}`)];
  for (const [i, id] of ids.entries()) {
    await claimConversation(stack.db.pool, stored(id), mine);
    await renameConversation(stack.db.pool, stored(id), i === 0 ? `Weekend in Lisbon ${tag}` : `Filler ${i}`);
  }
  const theirs = `globex-${tag}`;
  await claimConversation(stack.db.pool, stored(theirs, keyB), { tenantId: 'globex', projectId: 'app', userId: null });
  await renameConversation(stack.db.pool, stored(theirs, keyB), `Weekend in Lisbon ${tag}`);

  const firstPage = await call('GET', '/v1/conversations?limit=50', keyA);
  assert.ok(!firstPage.body.conversations.some((c: { id: string }) => c.id === needle), 'not on the first page');
  const byTitle = await call('GET', `/v1/conversations?limit=50&q=${encodeURIComponent(`LISBON ${tag}`)}`, keyA);
  assert.equal(byTitle.status, 200);
  assert.deepEqual(
    byTitle.body.conversations.map((c: { id: string }) => c.id),
    [needle],
    'found by title, case-insensitive, only the own tenant’s',
  );
  const byId = await call('GET', `/v1/conversations?q=trip-${tag}`, keyA);
  assert.deepEqual(
    byId.body.conversations.map((c: { id: string }) => c.id),
    [needle],
  );
  const paged = await call('GET', `/v1/conversations?limit=20&q=filler-${tag}`, keyA);
  assert.equal(paged.body.conversations.length, 20);
  assert.ok(paged.body.nextCursor, 'a search pages like the list');
  const wildcard = await call('GET', `/v1/conversations?q=${encodeURIComponent(`%${tag}`)}`, keyA);
  assert.deepEqual(wildcard.body.conversations, [], '% is a character, not a wildcard');
  const theirsFound = await call('GET', `/v1/conversations?q=${tag}`, keyB);
  assert.deepEqual(
    theirsFound.body.conversations.map((c: { id: string }) => c.id),
    [theirs],
  );
  const tooLong = await call('GET', `/v1/conversations?q=${'x'.repeat(201)}`, keyA);
  assert.equal(tooLong.status, 400);
  assert.match(JSON.stringify(tooLong.body), /q is too long/);
  const nul = await call('GET', '/v1/conversations?q=a%00b', keyA);
  assert.equal(nul.status, 400, JSON.stringify(nul.body));
  assert.match(JSON.stringify(nul.body), /q/);
});
