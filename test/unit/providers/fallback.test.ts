/**
 * Fallback chains: the pure decision (every condition; the same inputs give the same choice) and
 * the provider wrapper (moves on only before the first content part and before any usage; the
 * answering provider's metadata; the `fallback` part naming both models).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideFallback, DEFAULT_FALLBACK_POLICY, type FallbackInput } from '../../../core/model/fallback';
import { attemptFallback, fallbackProvider } from '../../../activities/model/middleware/fallback';
import { meter, type UsageReport, type UsageSink } from '../../../activities/model/middleware/meter';
import { wrapProvider } from '../../../core/model/middleware';
import {
  collectStream,
  ProviderError,
  type ModelProvider,
  type ProviderErrorKind,
  type StreamPart,
} from '../../../core/model/provider';

/** The meter over a provider (activities/model/gateway.ts puts it in the chain). */
const meteredProvider = (p: ModelProvider, sink: UsageSink, hooks?: Parameters<typeof meter>[1]) =>
  wrapProvider(p, meter(sink, hooks));

const at = (kind: ProviderErrorKind, extra: Partial<FallbackInput> = {}, failure: object = {}) =>
  decideFallback({ attempt: 1, index: 0, contextWindows: [200_000, 128_000], failure: { kind, ...failure }, ...extra });

test('conditions: overload and auth move on at once; 5xx from attempt 2; long rate limits only', () => {
  assert.equal(at('overloaded').next, 1);
  assert.equal(at('auth').next, 1);
  assert.equal(at('permission').next, 1);
  assert.equal(at('server').next, undefined, 'a 5xx on attempt 1 is retried on the same model');
  assert.equal(at('server', { attempt: 2 }).next, 1);
  assert.equal(at('network', { attempt: 3 }).next, 1);
  assert.equal(at('timeout', { attempt: 1 }).next, undefined);
  assert.equal(at('rate_limit', {}, { retryAfterMs: 2_000 }).next, undefined, 'a short wait is waited out');
  assert.equal(at('rate_limit', {}, { retryAfterMs: 60_000 }).next, 1);
  assert.equal(at('rate_limit').next, undefined, 'no retry-after: waited out');
  for (const k of ['bad_request', 'not_found', 'protocol', 'aborted'] as const) assert.equal(at(k).next, undefined, k);
  assert.equal(at('overloaded', { index: 1 }).next, undefined, 'the last model never moves on');
  assert.equal(at('overloaded', { policy: { ...DEFAULT_FALLBACK_POLICY, never: ['overloaded'] } }).next, undefined);
  assert.match(at('overloaded').reason, /overloaded/);
});

test('context length moves on to the first later model with a larger window, else the failure stands', () => {
  const windows = [64_000, 32_000, 128_000, 1_000_000];
  assert.equal(at('context_length', { contextWindows: windows }).next, 2);
  assert.equal(at('context_length', { contextWindows: [200_000, 128_000] }).next, undefined);
  assert.equal(
    at('context_length', { contextWindows: [undefined, 128_000] }).next,
    1,
    'an unknown window: any known one',
  );
  assert.throws(() => at('overloaded', { attempt: 0 }), /attempt/);
  assert.throws(() => at('overloaded', { index: 5 }), /outside the chain/);
});

const kinds: ProviderErrorKind[] = [
  'rate_limit',
  'overloaded',
  'server',
  'timeout',
  'network',
  'bad_request',
  'context_length',
  'auth',
  'permission',
  'not_found',
  'aborted',
  'protocol',
];

test('property: a pure function — the same attempt and failure give the same choice (replays agree); never backwards', () => {
  const input = fc.record({
    attempt: fc.integer({ min: 1, max: 10 }),
    windows: fc.array(fc.option(fc.integer({ min: 1_000, max: 2_000_000 }), { nil: undefined }), {
      minLength: 1,
      maxLength: 5,
    }),
    kind: fc.constantFrom(...kinds),
    retryAfterMs: fc.option(fc.integer({ min: 0, max: 600_000 }), { nil: undefined }),
    index: fc.nat(),
  });
  fc.assert(
    fc.property(input, ({ attempt, windows, kind, retryAfterMs, index }) => {
      const i = index % windows.length;
      const run = () =>
        decideFallback({
          attempt,
          index: i,
          contextWindows: windows,
          failure: { kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
        });
      const a = run();
      assert.deepEqual(run(), a);
      if (a.next !== undefined) assert.ok(a.next > i && a.next < windows.length);
      if (i === windows.length - 1) assert.equal(a.next, undefined);
    }),
    { numRuns: 500 },
  );
});

/** A provider scripted by a list of parts; a ProviderError in the list is thrown at that point. */
function fake(id: string, script: Array<StreamPart | ProviderError>): ModelProvider & { calls: number } {
  const p = {
    id,
    model: id.split(':')[1],
    calls: 0,
    async *stream() {
      p.calls++;
      for (const s of script) {
        if (s instanceof ProviderError) throw s;
        yield s;
      }
    },
  };
  return p;
}

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
const answer = (id: string): StreamPart[] => [
  { type: 'response-metadata', requestId: `req-${id}`, provider: id, model: id.split(':')[1] },
  { type: 'usage', usage },
  { type: 'text-delta', text: `hi from ${id}` },
  { type: 'finish', stopReason: 'end_turn', usage },
];
const overloaded = new ProviderError('overloaded', 'Overloaded', { status: 529 });
const req = {
  system: [],
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'q' }] }],
  maxTokens: 5,
};

test('wrapper: an overloaded primary moves on before any content; metadata, ledger report and fallback part name the answer', async () => {
  const a = fake('anthropic:claude-x', [overloaded]);
  const b = fake('openai:gpt-y', answer('openai:gpt-y'));
  const chain = fallbackProvider(
    [a, b],
    attemptFallback(() => 1, [200_000, 128_000]),
  );
  assert.equal(chain.id, 'anthropic:claude-x');
  const reports: UsageReport[] = [];
  const switched: string[] = [];
  const parts: StreamPart[] = [];
  const metered = meteredProvider(chain, async (r) => void reports.push(r), {
    onFallback: (f) => switched.push(`${f.from.provider} -> ${f.to.provider} (${f.reason})`),
  });
  for await (const p of metered.stream(req)) parts.push(p);
  assert.deepEqual(switched, ['anthropic:claude-x -> openai:gpt-y (overloaded)']);
  assert.deepEqual(
    parts.map((p) => p.type),
    ['fallback', 'response-metadata', 'usage', 'text-delta', 'finish'],
  );
  assert.equal(reports.at(-1)!.provider, 'openai:gpt-y');
  assert.equal(reports.at(-1)!.model, 'gpt-y');
  assert.equal(reports.at(-1)!.requestId, 'req-openai:gpt-y');
});

test('wrapper: no switch after content or usage, nor for a failure the rule keeps; the primary answers when it can', async () => {
  const cutAfterText = fake('anthropic:a', [
    { type: 'response-metadata', requestId: 'r1' },
    { type: 'text-delta', text: 'par' },
    overloaded,
  ]);
  const b = fake('openai:b', answer('openai:b'));
  const rule = attemptFallback(() => 1, [1, 1]);
  await assert.rejects(collectStream(fallbackProvider([cutAfterText, b], rule).stream(req)), /Overloaded/);
  assert.equal(b.calls, 0);
  const afterUsage = fake('anthropic:a', [{ type: 'response-metadata' }, { type: 'usage', usage }, overloaded]);
  await assert.rejects(collectStream(fallbackProvider([afterUsage, b], rule).stream(req)));
  assert.equal(b.calls, 0, 'the ledger already has the failed call: Temporal retries');
  const bad = fake('anthropic:a', [new ProviderError('bad_request', 'invalid')]);
  await assert.rejects(collectStream(fallbackProvider([bad, b], rule).stream(req)), /invalid/);
  assert.equal(b.calls, 0);
  const ok = fake('anthropic:a', answer('anthropic:a'));
  assert.equal((await collectStream(fallbackProvider([ok, b], rule).stream(req))).text, 'hi from anthropic:a');
  assert.equal(b.calls, 0);
});

test('wrapper: a failure that stands keeps the answered call metadata (the cut ledger row names it)', async () => {
  const a = fake('anthropic:a', [
    { type: 'response-metadata', requestId: 'req-a' },
    new ProviderError('server', '500'),
  ]);
  const b = fake('openai:b', answer('openai:b'));
  const reports: UsageReport[] = [];
  const chain = meteredProvider(
    fallbackProvider(
      [a, b],
      attemptFallback(() => 1, [1, 1]),
    ),
    async (r) => void reports.push(r),
  );
  await assert.rejects(collectStream(chain.stream(req)), /500/);
  assert.deepEqual(
    reports.map((r) => [r.final, r.requestId]),
    [[false, 'req-a']],
  );
  // Attempt 2 of the same activity: the same failure now moves on.
  const again = fallbackProvider(
    [fake('anthropic:a', [new ProviderError('server', '500')]), b],
    attemptFallback(() => 2, [1, 1]),
  );
  assert.equal((await collectStream(again.stream(req))).text, 'hi from openai:b');
});

test('wrapper: the fallback gets the request without the primary model id; a chain of one is the provider itself', async () => {
  let seen: string | undefined = 'unset';
  const b: ModelProvider = {
    id: 'openai:b',
    async *stream(r) {
      seen = r.model;
      yield* answer('openai:b');
    },
  };
  await collectStream(
    fallbackProvider([fake('anthropic:a', [overloaded]), b], () => ({ next: 1, reason: 'x' })).stream({
      ...req,
      model: 'claude-x',
    }),
  );
  assert.equal(seen, undefined);
  assert.equal(
    fallbackProvider([b], () => ({ next: undefined, reason: '' })),
    b,
  );
  assert.throws(() => fallbackProvider([], () => ({ next: undefined, reason: '' })), /empty/);
});
