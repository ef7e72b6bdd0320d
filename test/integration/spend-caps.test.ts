/**
 * Spend caps (issue 30) through real Temporal + Postgres + worker: every model call reserves its
 * worst case before it runs. 30 concurrent turns against a cap of a few calls bill at most the cap
 * plus the largest single reservation; a refused call ends the turn with a budget_exceeded answer
 * naming the budget (and a stream event); a killed worker's reservation expires; the agent's
 * per-turn cap; fail closed when the budget store cannot be read; a conversation no budget covers
 * takes no reservation, and a budget set before its next turn applies to that turn's first call.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { largestReservation as largestReservationOf, logReservations } from '../support/reservations';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { budgetUses, deleteBudget, reserveSpend, reservedSpend, setBudget } from '../../store/budget-store';
import { readEvents } from '../../store/stream-bus';

let stack: TestStack;
const MODEL = 'claude-haiku-4-5';
const agentsDir = mkdtempSync(path.join(os.tmpdir(), 'dreact-spend-agents-'));
// The scripted model priced like Claude Haiku (1 / 5 USD per MTok), as the ledger and the reservation see it.
const pricing = path.join(mkdtempSync(path.join(os.tmpdir(), 'dreact-spend-prices-')), 'pricing.json');
writeFileSync(pricing, JSON.stringify({ [`scripted:${MODEL}`]: { inputPerMTok: 1, outputPerMTok: 5 } }));
process.env.DREACT_PRICING_FILE = pricing;
writeFileSync(path.join(agentsDir, 'thrifty.yaml'), 'name: thrifty\nlimits: { spend_usd_per_turn: 0.04 }\n');

before(async () => {
  stack = await createTestStack('spendcaps');
  await logReservations(stack.db.pool);
  await stack.startWorker({ agents: { dir: agentsDir } });
});
after(async () => stack.teardown());

const scripted = (...rounds: string[]) => ({
  model: { provider: 'scripted' as const, model: MODEL, maxTokens: 4000, script: { rounds } },
});

const largestReservation = () => largestReservationOf(stack.db.pool);

async function billed(convs: string[]): Promise<number> {
  const res = await stack.db.pool.query<{ cost: number }>(
    `SELECT coalesce(sum(cost_usd), 0)::float AS cost FROM usage_ledger WHERE conversation_id = ANY($1)`,
    [convs],
  );
  return res.rows[0]!.cost;
}

test('30 concurrent turns against a cap of a few calls: billed <= cap + the largest reservation', async () => {
  const cap = 0.1;
  await setBudget(stack.db.pool, { tenantId: 'local', scope: 'tenant', scopeId: '', period: 'day', capUsd: cap });
  try {
    const convs = Array.from({ length: 30 }, () => uniqueId('conv'));
    await Promise.all(convs.map((c) => stack.client.startTurn(c, 'a question', scripted(complete('answered')))));
    const results = await Promise.all(convs.map((c) => stack.client.result(c, 1)));
    const refused = results.filter((r) => r.completionPath === 'budget_exceeded');
    const answered = results.filter((r) => r.completionPath === 'complete');
    assert.ok(refused.length > 0, 'the cap refused calls');
    assert.ok(answered.length > 0, 'calls within the cap ran');
    assert.match(refused[0]!.answer, /spend cap of tenant local, per day \(0\.10 USD\) would be exceeded/);
    const worstCall = await largestReservation();
    console.log(
      `spend caps: ${answered.length} answered, ${refused.length} refused, largest reservation ${worstCall.toFixed(4)} USD`,
    );
    const total = await billed(convs);
    assert.ok(total <= cap + worstCall, `billed ${total} <= cap ${cap} + one reservation ${worstCall}`);
    assert.equal(await reservedSpend(stack.db.pool, 'local'), 0, 'every reservation was released');
    const [use] = await budgetUses(stack.db.pool, 'local');
    assert.ok(use!.spentUsd > 0 && use!.spentUsd <= cap + worstCall);
    // The refusal reached the stream (what the CLI, the gateway and the web chat show).
    const events = await readEvents(stack.db.pool, refused[0]!.conversationId, 0);
    assert.ok(events.some((e) => e.kind === 'budget' && e.payload.phase === 'exceeded'));
    assert.ok(events.some((e) => e.kind === 'done' && e.payload.completionPath === 'budget_exceeded'));
  } finally {
    await deleteBudget(stack.db.pool, { tenantId: 'local', scope: 'tenant', scopeId: '', period: 'day' });
  }
});

test("the agent's per-turn cap ends a turn whose calls would exceed it", async () => {
  const conv = uniqueId('conv');
  const rounds = Array.from({ length: 6 }, (_, i) =>
    callTool('react.write', { path: `n${i}.md`, channel: 'internal', content: `step ${i}`, kind: 'file' }),
  );
  await stack.client.startTurn(
    conv,
    'loop',
    scripted(...rounds, complete('never')),
    undefined,
    undefined,
    undefined,
    'thrifty',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'budget_exceeded');
  assert.match(r.answer, /turn turn_1 of .* \(the agent's limits\.spend_usd_per_turn\)/);
  assert.ok((await billed([conv])) <= 0.04 + (await largestReservation()));
});

test('a conversation no budget covers takes no reservation; a budget set before its next turn applies at once', async () => {
  const conv = uniqueId('conv');
  const logged = async () =>
    (await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM reservation_log`)).rows[0]!.n;
  const before = await logged();
  await stack.client.startTurn(conv, 'a question', scripted(complete('answered')));
  assert.equal((await stack.client.result(conv, 1)).completionPath, 'complete');
  assert.equal(await logged(), before, 'the title call and the decision round reserved nothing');
  assert.ok((await billed([conv])) > 0, 'the calls are in the ledger all the same');
  const budget = { tenantId: 'local', scope: 'conversation' as const, scopeId: conv, period: 'day' as const };
  await setBudget(stack.db.pool, { ...budget, capUsd: 0.000001 });
  try {
    await stack.client.startTurn(conv, 'another question', scripted(complete('never')));
    const r = await stack.client.result(conv, 2);
    assert.equal(r.completionPath, 'budget_exceeded', 'the budget set a moment ago refused the round');
    assert.match(r.answer, new RegExp(`conversation ${conv}`));
  } finally {
    await deleteBudget(stack.db.pool, budget);
  }
});

test("a killed worker's reservation expires and stops holding the budget", async () => {
  const owner = { tenantId: 'expiry', projectId: 'p', userId: null };
  await setBudget(stack.db.pool, { tenantId: 'expiry', scope: 'tenant', scopeId: '', period: 'day', capUsd: 1 });
  const take = (callKey: string, ttlSeconds: number) =>
    reserveSpend(stack.db.pool, {
      conversationId: 'c_dead',
      turnId: 'turn_1',
      callKey,
      owner,
      amountUsd: 0.9,
      ttlSeconds,
    });
  assert.equal((await take('dead-worker-call', 1)).ok, true);
  const refused = await take('next-call', 60);
  assert.equal(refused.ok, false, 'the dead call still holds the budget');
  await new Promise((r) => setTimeout(r, 1_500));
  const later = await take('next-call', 60);
  assert.equal(later.ok, true, 'the expired reservation no longer counts');
  const rows = await stack.db.pool.query(`SELECT call_key FROM spend_reservations WHERE tenant_id = 'expiry'`);
  assert.deepEqual(
    rows.rows.map((r) => r.call_key),
    ['next-call'],
    'the expired row was deleted',
  );
});

test('warnings at 80 % and fail closed when the budget store cannot be read', async () => {
  const owner = { tenantId: 'warn', projectId: 'p', userId: null };
  await setBudget(stack.db.pool, { tenantId: 'warn', scope: 'project', scopeId: 'p', period: 'month', capUsd: 1 });
  const r = await reserveSpend(stack.db.pool, {
    conversationId: 'c_w',
    turnId: 'turn_1',
    callKey: 'k1',
    owner,
    amountUsd: 0.85,
    ttlSeconds: 60,
  });
  assert.equal(r.ok, true);
  assert.equal(r.ok && r.warnings[0]?.label, 'project p of tenant warn, per month');
  // A broken store refuses (throws): no unchecked call.
  const client = await stack.db.pool.connect();
  try {
    await client.query(`ALTER TABLE spend_budgets RENAME TO spend_budgets_away`);
    await assert.rejects(
      reserveSpend(stack.db.pool, {
        conversationId: 'c_w',
        turnId: 'turn_1',
        callKey: 'k2',
        owner,
        amountUsd: 0.01,
        ttlSeconds: 60,
      }),
      /spend_budgets/,
    );
  } finally {
    await client.query(`ALTER TABLE spend_budgets_away RENAME TO spend_budgets`);
    client.release();
  }
});
