import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Usage } from '../../../core/model/provider';
import {
  cacheReadRatio,
  costWithoutCache,
  EMPTY_LEDGER,
  estimateCost,
  ledgerTotals,
  priceFor,
  recordRound,
  roundTotals,
  totalsByTurn,
  turnTotals,
  type PriceTable,
} from '../../../core/model/pricing';

const u = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≈ ${b}`);

test('price lookup: exact, dated prefix, family fallback, unknown is a clear error; cache multipliers default to 1.25× / 0.1×', () => {
  const p = priceFor('claude-sonnet-4-5');
  assert.deepEqual([p.inputPerMTok, p.outputPerMTok], [3, 15]);
  close(p.cacheWritePerMTok, 3.75);
  close(p.cacheReadPerMTok, 0.3);
  assert.equal(priceFor('claude-opus-4-5-20251101').inputPerMTok, 5);
  assert.equal(priceFor('claude-opus-4-1-20250805').inputPerMTok, 15);
  assert.equal(priceFor('claude-haiku-9').inputPerMTok, 1);
  assert.throws(() => priceFor('gpt-x'), /no price for model "gpt-x"/);
  const custom: PriceTable = { m: { inputPerMTok: 2, outputPerMTok: 4, cacheWritePerMTok: 5, cacheReadPerMTok: 0.5 } };
  assert.deepEqual(priceFor('m', custom), {
    inputPerMTok: 2,
    outputPerMTok: 4,
    cacheWritePerMTok: 5,
    cacheWrite1hPerMTok: 4,
    cacheReadPerMTok: 0.5,
  });
});

test('one-hour cache writes (Anthropic ttl 1h) cost 2 × input, the rest of the writes 1.25 ×', () => {
  close(priceFor('claude-sonnet-4-5').cacheWrite1hPerMTok, 6);
  const c = estimateCost({ ...u(0, 0, 0, 1_000_000), cacheWrite1hTokens: 600_000 }, 'claude-sonnet-4-5');
  close(c.cacheWrite, 0.4 * 3.75 + 0.6 * 6);
  // A split larger than the writes it is part of counts as all of them.
  close(estimateCost({ ...u(0, 0, 0, 100), cacheWrite1hTokens: 500 }, 'claude-sonnet-4-5').cacheWrite, (100 * 6) / 1e6);
});

test('estimateCost and costWithoutCache', () => {
  const c = estimateCost(u(1_000_000, 100_000, 2_000_000, 400_000), 'claude-sonnet-4-5');
  close(c.input, 3);
  close(c.output, 1.5);
  close(c.cacheRead, 0.6);
  close(c.cacheWrite, 1.5);
  close(c.total, 6.6);
  close(costWithoutCache(u(1_000_000, 100_000, 2_000_000, 400_000), 'claude-sonnet-4-5'), 3.4 * 3 + 1.5);
});

test('cacheReadRatio = read / (input + read + write); 0 for no prompt tokens', () => {
  assert.equal(cacheReadRatio(u(10, 5, 80, 10)), 0.8);
  assert.equal(cacheReadRatio(u(0, 5)), 0);
});

test('ledger: per-round and per-turn totals; repeated round records add up; input is not mutated', () => {
  let l = EMPTY_LEDGER;
  l = recordRound(l, { turnId: 't1', round: 0, model: 'claude-sonnet-4-5', usage: u(100, 10, 0, 2000) });
  l = recordRound(l, { turnId: 't1', round: 1, model: 'claude-sonnet-4-5', usage: u(50, 10, 2000, 0) });
  const before = l;
  l = recordRound(l, { turnId: 't1', round: 1, model: 'claude-sonnet-4-5', usage: u(5, 1, 100, 0) });
  l = recordRound(l, { turnId: 't2', round: 0, model: 'claude-haiku-4-5', usage: u(10, 1, 1000, 0) });
  assert.equal(before.rounds.length, 2);
  assert.deepEqual(before.rounds[1]!.usage, u(50, 10, 2000, 0));
  assert.deepEqual(roundTotals(l, 't1', 1).usage, u(55, 11, 2100, 0));
  const t1 = turnTotals(l, 't1');
  assert.deepEqual(t1.usage, u(155, 21, 2100, 2000));
  assert.equal(t1.rounds, 2);
  close(t1.cacheReadRatio, 2100 / (155 + 2100 + 2000));
  const all = ledgerTotals(l);
  close(all.cost, turnTotals(l, 't1').cost + turnTotals(l, 't2').cost);
  assert.deepEqual(
    totalsByTurn(l).map((t) => t.turnId),
    ['t1', 't2'],
  );
  assert.throws(
    () => recordRound(l, { turnId: 't', round: 0, model: 'm', usage: u(-1, 0) }),
    /usage\.inputTokens must be a non-negative integer/,
  );
});

test('property: ledger totals equal the sum of the records; cost ≤ no-cache cost when reads dominate writes', () => {
  const usageArb = fc.record({
    inputTokens: fc.nat(1e6),
    outputTokens: fc.nat(1e5),
    cacheReadTokens: fc.nat(1e6),
    cacheWriteTokens: fc.nat(1e6),
  });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b'), fc.nat(5), usageArb), { maxLength: 30 }), (rows) => {
      let l = EMPTY_LEDGER;
      for (const [turnId, round, usage] of rows)
        l = recordRound(l, { turnId, round, model: 'claude-sonnet-4-5', usage });
      const tot = ledgerTotals(l).usage;
      const sum = rows.reduce((acc, [, , x]) => acc + x.inputTokens + x.cacheReadTokens, 0);
      assert.equal(tot.inputTokens + tot.cacheReadTokens, sum);
    }),
  );
  fc.assert(
    fc.property(usageArb, (x) => {
      fc.pre(x.cacheReadTokens * 0.9 >= x.cacheWriteTokens * 0.25);
      assert.ok(estimateCost(x, 'claude-sonnet-4-5').total <= costWithoutCache(x, 'claude-sonnet-4-5') + 1e-9);
    }),
  );
});
