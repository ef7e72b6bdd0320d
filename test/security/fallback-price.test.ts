/**
 * Issue 36: a fallback chain reserves at the price of the model that will be called (real Temporal,
 * Postgres and worker; the real Anthropic and OpenAI SDKs against the repo's emulators). The chain
 * is a cheap Anthropic model falling back to a dear OpenAI one with a larger output budget.
 *
 * - Under a budget the primary's worst case fits but the fallback's does not, an overloaded primary
 *   does not move on: the call is reserved again at the fallback's price first, that is refused, and
 *   the fallback model is never called — the turn answers budget_exceeded naming the budget.
 * - Under a budget both fit, the fallback answers, and its call was reserved at its own price and
 *   output budget (the reservation is replaced, not added: nothing stays reserved).
 *
 * On the code before the fix the fallback ran under the primary's reservation and was billed past the cap.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../emulator/openai-emulator';
import { emulatedProviders } from '../support/emulated-providers';
import { isDecisionRequest } from '../support/note-turns';
import { logReservations, reservationsOf } from '../support/reservations';
import { deleteBudget, reservedSpend, setBudget } from '../../store/budget-store';
import type { TurnOptionsInput } from '../../core/turn/contracts';

const PRIMARY = 'claude-haiku-4-5';
const FALLBACK = 'gpt-4.1';
const FALLBACK_OUTPUT_PER_MTOK = 120;
const FALLBACK_MAX_TOKENS = 4000;
const pricing = path.join(mkdtempSync(path.join(os.tmpdir(), 'dreact-fallback-prices-')), 'pricing.json');
writeFileSync(
  pricing,
  JSON.stringify({
    [PRIMARY]: { inputPerMTok: 1, outputPerMTok: 5 },
    [`openai:${FALLBACK}`]: { inputPerMTok: 30, outputPerMTok: FALLBACK_OUTPUT_PER_MTOK },
  }),
);
process.env.DREACT_PRICING_FILE = pricing;

const chain = {
  model: {
    provider: 'anthropic',
    model: PRIMARY,
    maxTokens: 500,
    fallbacks: [{ provider: 'openai', model: FALLBACK, maxTokens: FALLBACK_MAX_TOKENS }],
  },
} as unknown as TurnOptionsInput;
const title = reply.toolUse('conversation_title', { title: 'Priced' });
/** The fallback's output budget alone, at its price: more than the primary's whole worst case. */
const FALLBACK_OUTPUT_USD = (FALLBACK_MAX_TOKENS * FALLBACK_OUTPUT_PER_MTOK) / 1e6;

let stack: TestStack;
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;
before(async () => {
  anthropic = await startAnthropicEmulator({ chunkDelayMs: 1 });
  openai = await startOpenAIEmulator({ chunkDelayMs: 1 });
  stack = await createTestStack('fallbackprice');
  await logReservations(stack.db.pool);
  await stack.startWorker({
    provider: emulatedProviders({ anthropic, openai }, { DREACT_PRICING_FILE: pricing }),
  });
  // A warm-up turn through both SDKs (as test/integration/fallback.test.ts): a cold worker's first
  // round may outlive its heartbeat timeout, and the overload it got then belongs to a cancelled attempt.
  await turn(100, 'warm');
});
after(async () => {
  await stack.teardown();
  await anthropic.stop();
  await openai.stop();
});

/** A turn whose primary is overloaded and whose fallback would answer `answer`, under a conversation budget. */
async function turn(cap: number, answer: string) {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(title, reply.overloaded());
  openai.enqueue(oreply.text(complete(answer)));
  const conv = uniqueId('conv');
  const budget = { tenantId: 'local', scope: 'conversation' as const, scopeId: conv, period: 'day' as const };
  await setBudget(stack.db.pool, { ...budget, capUsd: cap });
  try {
    await stack.client.startTurn(conv, 'are you there?', chain);
    return { conv, result: await stack.client.result(conv, 1) };
  } finally {
    await deleteBudget(stack.db.pool, budget);
  }
}

test('a dearer fallback the budget cannot afford is never called: reserved again at its price, refused', async () => {
  // The primary's worst case is a few tenths of a cent; the fallback's output budget alone is 0.48 USD.
  const { conv, result } = await turn(0.1, 'The fallback answered past the cap.');
  assert.equal(result.completionPath, 'budget_exceeded', `answer: ${result.answer}`);
  assert.match(
    result.answer,
    new RegExp(`spend cap of conversation ${conv} of tenant local, per day \\(0\\.10 USD\\)`),
  );
  assert.equal(anthropic.requests.filter((q) => isDecisionRequest(q.body)).length, 1, 'the primary was asked');
  assert.equal(openai.requests.length, 0, 'the fallback model was never called');
  assert.equal(await reservedSpend(stack.db.pool, 'local', conv), 0, 'nothing stays reserved');
});

test('a fallback within the budget answers, reserved at its own price and output budget', async () => {
  const { conv, result } = await turn(5, 'Answered by the fallback.');
  assert.equal(result.answer, 'Answered by the fallback.');
  assert.equal(openai.requests.length, 1);
  const decision = (await reservationsOf(stack.db.pool, `conv/${conv}/turn/1/%`)).filter(
    (r) => !r.callKey.includes('/gate/'),
  );
  console.log(`fallback price: reservations of the round ${decision.map((r) => r.amount.toFixed(5)).join(' → ')} USD`);
  assert.equal(decision.length, 2, "the round's call was reserved twice: the primary's price, then the fallback's");
  assert.ok(decision[0]!.amount < FALLBACK_OUTPUT_USD / 10, `the primary's worst case ${decision[0]!.amount}`);
  assert.ok(decision[1]!.amount > FALLBACK_OUTPUT_USD, `the fallback's worst case ${decision[1]!.amount}`);
  assert.equal(await reservedSpend(stack.db.pool, 'local', conv), 0, 'the call released its one reservation');
  const row = await stack.db.pool.query(
    `SELECT model, cost_usd FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision'`,
    [conv],
  );
  assert.equal(row.rows[0].model, FALLBACK, 'the ledger names the model that answered');
});
