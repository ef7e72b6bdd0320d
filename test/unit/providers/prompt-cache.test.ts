import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptCache, TooManyBreakpointsError } from '../../emulator/prompt-cache';

const big = (c: string, tokens: number): string => c.repeat(tokens * 4);
const cc = { type: 'ephemeral' };

function body(
  system: Array<{ text: string; bp?: boolean }>,
  msgs: Array<{ text: string; bp?: boolean }>,
  model = 'm',
): Record<string, unknown> {
  return {
    model,
    system: system.map((s) => ({ type: 'text', text: s.text, ...(s.bp ? { cache_control: cc } : {}) })),
    messages: msgs.map((m, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: [{ type: 'text', text: m.text, ...(m.bp ? { cache_control: cc } : {}) }],
    })),
  };
}

test('first request writes the breakpoint prefix, the second reads it', () => {
  const cache = new PromptCache();
  const b = body([{ text: big('s', 2000), bp: true }], [{ text: 'hello' }]);
  const a1 = cache.account(b);
  assert.deepEqual([a1.cacheWriteTokens, a1.cacheReadTokens, a1.inputTokens], [2000, 0, 2]);
  const a2 = cache.account(b);
  assert.deepEqual([a2.cacheWriteTokens, a2.cacheReadTokens, a2.inputTokens], [0, 2000, 2]);
  assert.equal(a2.totalPromptTokens, a2.inputTokens + a2.cacheReadTokens + a2.cacheWriteTokens);
});

test('a change before the breakpoint misses; a different model misses', () => {
  const cache = new PromptCache();
  cache.account(body([{ text: big('s', 2000), bp: true }], [{ text: 'x' }]));
  assert.equal(cache.account(body([{ text: big('t', 2000), bp: true }], [{ text: 'x' }])).cacheReadTokens, 0);
  assert.equal(cache.account(body([{ text: big('s', 2000), bp: true }], [{ text: 'x' }], 'other')).cacheReadTokens, 0);
});

test('prefixes shorter than the minimum are silently not cached (configurable minimum)', () => {
  const cache = new PromptCache();
  const b = body([{ text: big('s', 500), bp: true }], [{ text: 'x' }]);
  assert.equal(cache.account(b).cacheWriteTokens, 0);
  assert.equal(cache.account(b).cacheReadTokens, 0);
  const small = new PromptCache({ minCacheableTokens: 100 });
  small.account(b);
  assert.equal(small.account(b).cacheReadTokens, 500);
});

test('growing conversation: the moved tail breakpoint hits the earlier entry within 20 blocks and writes the rest', () => {
  const cache = new PromptCache();
  const msgs = [{ text: big('a', 1500), bp: true }];
  cache.account(body([{ text: 'sys' }], msgs));
  const grown = [{ text: big('a', 1500) }, { text: big('b', 100) }, { text: big('c', 100), bp: true }];
  const acc = cache.account(body([{ text: 'sys' }], grown));
  assert.equal(acc.cacheReadTokens, 1 + 1500);
  assert.equal(acc.cacheWriteTokens, 200);
  assert.equal(acc.inputTokens, 0);
});

test('look-back is limited to 20 blocks', () => {
  const cache = new PromptCache({ minCacheableTokens: 10 });
  const first = [{ text: big('a', 50), bp: true }];
  cache.account(body([], first));
  const many: Array<{ text: string; bp?: boolean }> = [
    { text: big('a', 50) },
    ...Array.from({ length: 20 }, (_, i) => ({ text: `m${i}` })),
  ];
  many[many.length - 1]!.bp = true;
  assert.equal(cache.account(body([], many)).cacheReadTokens, 0, '21 blocks back: no hit');
  const cache2 = new PromptCache({ minCacheableTokens: 10 });
  cache2.account(body([], first));
  const fewer: Array<{ text: string; bp?: boolean }> = [
    { text: big('a', 50) },
    ...Array.from({ length: 19 }, (_, i) => ({ text: `m${i}` })),
  ];
  fewer[fewer.length - 1]!.bp = true;
  assert.equal(cache2.account(body([], fewer)).cacheReadTokens, 50, '20 blocks back: hit');
});

test('entries expire after the TTL on the injected clock; hits refresh the TTL', () => {
  let now = 0;
  const cache = new PromptCache({ now: () => now });
  const b = body([{ text: big('s', 2000), bp: true }], [{ text: 'x' }]);
  cache.account(b);
  now = 4 * 60_000;
  assert.equal(cache.account(b).cacheReadTokens, 2000);
  now = 8 * 60_000; // 4 min after the refresh
  assert.equal(cache.account(b).cacheReadTokens, 2000);
  now = 14 * 60_000; // 6 min after the last hit
  const acc = cache.account(b);
  assert.equal(acc.cacheReadTokens, 0);
  assert.equal(acc.cacheWriteTokens, 2000);
});

test('more than 4 breakpoints is rejected', () => {
  const cache = new PromptCache();
  const b = body(
    [
      { text: 'a', bp: true },
      { text: 'b', bp: true },
    ],
    [
      { text: 'c', bp: true },
      { text: 'd', bp: true },
      { text: 'e', bp: true },
    ],
  );
  assert.throws(() => cache.account(b), TooManyBreakpointsError);
  assert.throws(() => cache.account(b), /maximum of 4 blocks with cache_control/);
});

test('tools are part of the prefix (tools → system → messages)', () => {
  const cache = new PromptCache();
  const withTools = (desc: string) => ({
    ...body([{ text: big('s', 2000), bp: true }], [{ text: 'x' }]),
    tools: [{ name: 't', description: desc, input_schema: { type: 'object' } }],
  });
  cache.account(withTools('one'));
  assert.ok(cache.account(withTools('one')).cacheReadTokens > 2000);
  assert.equal(cache.account(withTools('two')).cacheReadTokens, 0);
});

test("cache_control ttl '1h' keeps the entry for an hour", () => {
  let now = 0;
  const cache = new PromptCache({ now: () => now });
  const b = {
    model: 'm',
    system: [{ type: 'text', text: big('s', 2000), cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [{ role: 'user', content: 'x' }],
  };
  cache.account(b);
  now = 50 * 60_000;
  assert.equal(cache.account(b).cacheReadTokens, 2000);
});
