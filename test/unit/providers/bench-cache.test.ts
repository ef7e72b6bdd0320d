/** The cache bench is deterministic (injected clock, seeded content): its figures are assertable. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchCache } from '../../../bench/cache';

test('renderer breakpoints reach a ≥ 0.90 cache-read share and beat a single tail / last-block breakpoint', async () => {
  const f = await benchCache();
  assert.equal(f.ledger_matches_emulator, 'yes');
  assert.ok(Number(f.renderer_cache_read_share) >= 0.9, `renderer share ${f.renderer_cache_read_share}`);
  assert.ok(Number(f.renderer_cost_vs_no_cache) < 0.3);
  assert.ok(Number(f.renderer_cache_read_share) >= Number(f.tail_only_cache_read_share));
  assert.ok(Number(f.tail_only_cache_read_share) > Number(f.last_block_cache_read_share));
  assert.ok(
    Number(f.long_turns_renderer_cache_read_share) >= Number(f.long_turns_tail_only_cache_read_share),
    'long turns: previous-turn / pre-tail checkpoints never hurt',
  );
});
