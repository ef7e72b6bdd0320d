/**
 * What a chat reads back from a finished turn, through the gateway (issue 32, items 3 and 4):
 * - citations kept: the completion records `sources_used`, and the timeline API (blocks + the
 *   sources pool) rebuilds exactly the citations the live stream showed;
 * - feedback: ratings ok | not_ok | neutral with `up` / `down` as aliases and null clearing, each
 *   rater's latest rating counted in the satisfaction rate per conversation (usage API) and per
 *   tenant and project (`/v1/usage`), machine feedback (admin keys, `DreactClient.machineFeedback`)
 *   kept apart and never put on the timeline.
 * Real Temporal and Postgres, scripted model.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { callTool, complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';
import { readEvents } from '../../store/stream-bus';
import { loadBlocks } from '../../store/timeline-store';
import { replaceCitations } from '../../core/channels';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { DreactClient, DreactError } from '../../client/api';
import { visibleItems } from '../../core/timeline/render';

let stack: TestStack;
let gw: GatewayApp;
let alice: string;
let bob: string;
let admin: string;
let mobile: string;
let conv: string;

/** A search tool returning two sources (merged into the pool as S:1 and S:2). */
const sourcesTool: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.sources',
    description: 'Returns two sources.',
    params: z.object({}),
    strategy: 'exploration',
    timeoutMs: 30_000,
    retry: { maximumAttempts: 3, initialInterval: 1000, backoffCoefficient: 2 },
    summarize: () => 'tool test.sources',
  }),
  impl: {
    id: 'test.sources',
    run: async () => ({
      ok: true,
      text: 'found [[S:1]] and [[S:2]]',
      meta: {
        source_rows: [
          { sid: 1, title: 'Revenue report', url: 'https://example.com/revenue' },
          { sid: 2, title: 'Market study', url: 'https://example.com/market' },
        ],
      },
    }),
  },
};

const ANSWER = 'Revenue grew 12% [[S:1]], driven by the north [[S:1,2]]; an unknown one stays plain [[S:9]].';

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await gw.fetch(
    new Request(`http://gw${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as any };
}

async function turn(key: string, id: string, rounds: string[], index: number): Promise<void> {
  const res = await call('POST', `/v1/conversations/${id}/turns`, key, {
    prompt: `turn ${index}`,
    options: { model: { provider: 'scripted', script: { rounds } } },
  });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  await stack.client.result(`acme~web~alice~${id}`, index);
}

before(async () => {
  stack = await createTestStack('feedback');
  await stack.startWorker({ extraTools: [sourcesTool] });
  const pool = stack.db.pool;
  alice = (await createApiKey(pool, { tenantId: 'acme', projectId: 'web', userId: 'alice', scopes: ['read', 'write'] }))
    .key;
  bob = (await createApiKey(pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write'] })).key;
  admin = (
    await createApiKey(pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes: ['read', 'write', 'admin'] })
  ).key;
  mobile = (
    await createApiKey(pool, {
      tenantId: 'acme',
      projectId: 'mobile',
      userId: null,
      scopes: ['read', 'write', 'admin'],
    })
  ).key;
  gw = await createGatewayApp({
    client: stack.client,
    pool,
    apiKeys: [],
    listen: false,
    web: false,
    allowScripted: true,
  });
  conv = uniqueId('conv');
  await turn(
    alice,
    conv,
    [
      callTool('test.sources', {}),
      thinking('answering') +
        decision({ action: 'complete', notes: 'answer' }) +
        `<channel:answer>${ANSWER}</channel:answer>`,
    ],
    1,
  );
  await turn(alice, conv, [complete('A second answer.')], 2);
});
after(async () => {
  await stack?.teardown();
});

test('citations kept: the completion records sources_used; the timeline API rebuilds the live citations exactly', async () => {
  const stored = `acme~web~alice~${conv}`;
  const live = (await readEvents(stack.db.pool, stored, 0))
    .filter((e) => e.kind === 'delta' && e.channel === 'answer' && e.turnId === 'turn_1')
    .map((e) => (e.kind === 'delta' ? e.payload.text : ''))
    .join('');
  assert.match(live, /\[Revenue report\]\(https:\/\/example\.com\/revenue\)/, 'the live stream rendered the citations');

  const timeline = await call('GET', `/v1/conversations/${conv}/timeline`, alice);
  assert.equal(timeline.status, 200);
  const completion = (
    timeline.body.blocks as Array<{ type: string; turn_id: string; text: string; meta: Record<string, unknown> }>
  ).find((b) => b.type === 'assistant.completion' && b.turn_id === 'turn_1')!;
  assert.equal(completion.text, ANSWER, 'the stored text keeps its [[S:n]] markers');
  assert.deepEqual(completion.meta.sources_used, [1, 2], 'the resolvable SIDs it cites (S:9 is not in the pool)');
  assert.deepEqual(
    (timeline.body.sources as Array<{ sid: number; title: string; url: string }>).map((s) => [s.sid, s.title, s.url]),
    [
      [1, 'Revenue report', 'https://example.com/revenue'],
      [2, 'Market study', 'https://example.com/market'],
    ],
  );
  const rebuilt = replaceCitations(completion.text, timeline.body.sources, 'markdown');
  assert.equal(rebuilt.text, live, 'a reload shows exactly what the live stream showed');
  assert.deepEqual(rebuilt.used, completion.meta.sources_used);

  const exported = await call('GET', `/v1/conversations/${conv}/export`, alice);
  const exportedCompletion = (exported.body.blocks as Array<{ id: string; meta: Record<string, unknown> }>).find(
    (b) => b.id === (completion as unknown as { id: string }).id,
  )!;
  assert.deepEqual(exportedCompletion.meta.sources_used, [1, 2]);
  assert.equal(exported.body.sources_pool.length, 2);

  const second = (timeline.body.blocks as Array<{ type: string; turn_id: string; meta: Record<string, unknown> }>).find(
    (b) => b.type === 'assistant.completion' && b.turn_id === 'turn_2',
  )!;
  assert.deepEqual(second.meta.sources_used, [], 'an answer without citations records none');
});

test('feedback: ok | not_ok | neutral, up/down aliases stored canonical, null clears; refused input', async () => {
  // Project-wide keys name alice's conversation relative to their space: `alice~<id>`.
  const post = (key: string, body: unknown) =>
    call('POST', `/v1/conversations/${key === alice ? conv : `alice~${conv}`}/feedback`, key, body);
  assert.equal((await post(alice, { turnIndex: 1, rating: 'up', feedbackId: 'fb_alias_up_1' })).status, 201);
  assert.equal((await post(alice, { turnIndex: 2, rating: 'down', feedbackId: 'fb_alias_down' })).status, 201);
  assert.equal((await post(alice, { turnIndex: 2, rating: 'neutral', feedbackId: 'fb_neutral_2' })).status, 201);
  assert.equal((await post(bob, { turnIndex: 1, rating: 'not_ok', text: 'wrong numbers' })).status, 201);
  const listed = await call('GET', `/v1/conversations/${conv}/feedback`, alice);
  assert.deepEqual(
    listed.body.feedback.map((f: { rating: string | null; origin: string }) => [f.rating, f.origin]),
    [
      ['ok', 'user'],
      ['not_ok', 'user'],
      ['neutral', 'user'],
      ['not_ok', 'user'],
    ],
  );
  for (const [body, re] of [
    [{ turnIndex: 1, rating: 'meh' }, /rating must be "ok", "not_ok", "neutral" \(aliases "up", "down"\) or null/],
    [{ turnIndex: 1 }, /rating/],
    [{ turnIndex: 1, rating: 'ok', origin: 'robot' }, /origin/],
    [{ turnIndex: 1, rating: 'ok', source: 'eval:x' }, /source: required with origin "machine", and only with it/],
  ] as const) {
    const r = await post(alice, body);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(r.body.error.message, re);
  }
  const filtered = await call('GET', '/v1/feedback?rating=down', alice);
  assert.ok(filtered.body.feedback.every((f: { rating: string }) => f.rating === 'not_ok'));
  assert.ok(filtered.body.feedback.some((f: { feedbackId: string }) => f.feedbackId === 'fb_alias_down'));

  // The next turn's render names the latest ratings as the model reads them.
  const view = visibleItems(await loadBlocks(stack.db.pool, `acme~web~alice~${conv}`), 'turn_2')
    .map((it) => it.text)
    .join('\n');
  assert.match(view, /\[USER FEEDBACK: neutral rating on turn_2\]/);
  assert.match(view, /\[USER FEEDBACK: thumbs down on turn_1\][\s\S]*wrong numbers/);
});

test('satisfaction: ok / (ok + not_ok + neutral) over each rater’s latest rating; a clear removes it', async () => {
  // alice: turn 1 ok, turn 2 neutral (after down); bob: turn 1 not_ok → 1 / 3.
  let usage = await call('GET', `/v1/conversations/${conv}/usage`, alice);
  assert.deepEqual(usage.body.satisfaction.user, { ok: 1, notOk: 1, neutral: 1, rate: 1 / 3 });
  const cleared = await call('POST', `/v1/conversations/${conv}/feedback`, alice, { turnIndex: 2, rating: null });
  assert.equal(cleared.status, 201);
  usage = await call('GET', `/v1/conversations/${conv}/usage`, alice);
  assert.deepEqual(usage.body.satisfaction.user, { ok: 1, notOk: 1, neutral: 0, rate: 0.5 });
  assert.deepEqual(usage.body.satisfaction.machine, { ok: 0, notOk: 0, neutral: 0, rate: null });
  const listed = await call('GET', `/v1/conversations/${conv}/feedback`, alice);
  assert.equal(listed.body.feedback.at(-1).rating, null, 'the clear is a row of its own');

  // Another project of the tenant rates its own conversation: per-project and tenant rates.
  const other = uniqueId('mob');
  const res = await call('POST', `/v1/conversations/${other}/turns`, mobile, {
    prompt: 'hi',
    options: { model: { provider: 'scripted', script: { rounds: [complete('hello')] } } },
  });
  assert.equal(res.status, 202);
  await stack.client.result(`acme~mobile~${other}`, 1);
  assert.equal(
    (await call('POST', `/v1/conversations/${other}/feedback`, mobile, { turnIndex: 1, rating: 'ok' })).status,
    201,
  );
  const tenant = await call('GET', '/v1/usage?days=7', admin);
  assert.equal(tenant.status, 200);
  assert.deepEqual(tenant.body.satisfaction.user, { ok: 2, notOk: 1, neutral: 0, rate: 2 / 3 });
  assert.deepEqual(
    tenant.body.satisfaction.projects.map((p: { projectId: string; user: { rate: number } }) => [
      p.projectId,
      p.user.rate,
    ]),
    [
      ['mobile', 1],
      ['web', 0.5],
    ],
  );
});

test('machine feedback: admin keys and DreactClient.machineFeedback, counted apart, never on the timeline', async () => {
  const blocksBefore = (await loadBlocks(stack.db.pool, `acme~web~alice~${conv}`)).filter(
    (b) => b.type === 'user.feedback',
  ).length;
  const body = { turnIndex: 1, rating: 'ok', origin: 'machine', source: 'eval:faithfulness' };
  const refused = await call('POST', `/v1/conversations/${conv}/feedback`, alice, body);
  assert.equal(refused.status, 403);
  assert.match(refused.body.error.message, /admin/);
  const viaApi = await call('POST', `/v1/conversations/alice~${conv}/feedback`, admin, body);
  assert.equal(viaApi.status, 201, JSON.stringify(viaApi.body));
  assert.equal(viaApi.body.blockId, null);

  const client = new DreactClient(stack.server.env.client, { taskQueue: stack.taskQueue, db: stack.db.pool });
  const stored = `acme~web~alice~${conv}`;
  const first = await client.machineFeedback(stored, 2, {
    rating: 'down',
    source: 'tool:test.validator',
    feedbackId: 'fb_machine_0001',
  });
  assert.deepEqual(first, { feedbackId: 'fb_machine_0001', created: true });
  assert.deepEqual(
    await client.machineFeedback(stored, 2, {
      rating: 'down',
      source: 'tool:test.validator',
      feedbackId: 'fb_machine_0001',
    }),
    { feedbackId: 'fb_machine_0001', created: false },
    'idempotent by feedback id',
  );
  await assert.rejects(
    client.machineFeedback(stored, 1, { rating: 'great' as never, source: 'eval:x' }),
    (e: unknown) => e instanceof DreactError && e.code === 'bad_input' && /rating must be/.test(e.message),
  );
  await assert.rejects(
    client.machineFeedback(stored, 9, { rating: 'ok', source: 'eval:x' }),
    (e: unknown) => e instanceof DreactError && e.code === 'not_found',
  );

  const usage = await call('GET', `/v1/conversations/${conv}/usage`, alice);
  assert.deepEqual(usage.body.satisfaction.machine, { ok: 1, notOk: 1, neutral: 0, rate: 0.5 });
  assert.deepEqual(usage.body.satisfaction.user, { ok: 1, notOk: 1, neutral: 0, rate: 0.5 }, 'user rate unchanged');
  const machine = await call('GET', '/v1/feedback?origin=machine', admin);
  assert.deepEqual(machine.body.feedback.map((f: { source: string; rating: string }) => [f.source, f.rating]).sort(), [
    ['eval:faithfulness', 'ok'],
    ['tool:test.validator', 'not_ok'],
  ]);
  const blocksAfter = (await loadBlocks(stack.db.pool, stored)).filter((b) => b.type === 'user.feedback').length;
  assert.equal(blocksAfter, blocksBefore, 'machine feedback adds no block');
});
