/** The metered provider (activities/model/middleware/meter.ts): what reaches the usage sink, and when. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meter, type UsageReport, type UsageSink } from '../../../activities/model/middleware/meter';
import { wrapProvider } from '../../../core/model/middleware';
import { ProviderError, ZERO_USAGE, type ModelProvider, type StreamPart } from '../../../core/model/provider';

/** The meter over a provider (activities/model/gateway.ts puts it in the chain). */
const meteredProvider = (p: ModelProvider, sink: UsageSink, hooks?: Parameters<typeof meter>[1]) =>
  wrapProvider(p, meter(sink, hooks));

const usage = { inputTokens: 10, outputTokens: 0, cacheReadTokens: 5, cacheWriteTokens: 0 };
const final = { ...usage, outputTokens: 7 };
const request = { system: [], messages: [], maxTokens: 100 };

function provider(parts: StreamPart[], failAfter?: number): ModelProvider {
  return {
    id: 'test',
    async *stream() {
      for (const [i, p] of parts.entries()) {
        if (i === failAfter) throw new ProviderError('network', 'connection cut');
        yield p;
      }
      if (failAfter !== undefined && failAfter >= parts.length) throw new ProviderError('network', 'connection cut');
    },
  };
}

async function drain(p: ModelProvider): Promise<{ parts: string[]; error?: unknown }> {
  const parts: string[] = [];
  try {
    for await (const part of p.stream(request)) parts.push(part.type);
    return { parts };
  } catch (error) {
    return { parts, error };
  }
}

const whole: StreamPart[] = [
  { type: 'response-metadata', requestId: 'req_1' },
  { type: 'usage', usage },
  { type: 'text-delta', text: 'hi' },
  { type: 'usage', usage: final },
  { type: 'finish', stopReason: 'end_turn', usage: final },
];

test('a whole call: its first usage (unfinished) and its final usage, both with the request id', async () => {
  const reports: UsageReport[] = [];
  const r = await drain(meteredProvider(provider(whole), async (u) => void reports.push(u)));
  assert.equal(r.error, undefined);
  assert.deepEqual(r.parts, ['response-metadata', 'usage', 'text-delta', 'usage', 'finish']);
  assert.deepEqual(reports, [
    { usage, final: false, requestId: 'req_1' },
    { usage: final, final: true, requestId: 'req_1' },
  ]);
});

test('a call cut after its first usage: that one report, and the failure passes through', async () => {
  const reports: UsageReport[] = [];
  const r = await drain(meteredProvider(provider(whole, 3), async (u) => void reports.push(u)));
  assert.match(String(r.error), /connection cut/);
  assert.deepEqual(reports, [{ usage, final: false, requestId: 'req_1' }]);
});

test('a call the provider answered that failed before any usage: a zero, unfinished report with its request id', async () => {
  const reports: UsageReport[] = [];
  const r = await drain(meteredProvider(provider(whole, 1), async (u) => void reports.push(u)));
  assert.match(String(r.error), /connection cut/);
  assert.deepEqual(reports, [{ usage: ZERO_USAGE, final: false, requestId: 'req_1' }]);
});

test('a call that failed before the provider answered (no response): nothing to record', async () => {
  const reports: UsageReport[] = [];
  const r = await drain(meteredProvider(provider(whole, 0), async (u) => void reports.push(u)));
  assert.match(String(r.error), /connection cut/);
  assert.deepEqual(reports, []);
});

test("a failed write of a failed call's row: the call's own failure is what the caller sees", async () => {
  const r = await drain(
    meteredProvider(provider(whole, 1), async () => {
      throw new Error('database down');
    }),
  );
  assert.match(String(r.error), /connection cut/);
});

test('a failed write of a first usage fails the call with that error', async () => {
  const r = await drain(
    meteredProvider(provider(whole), async () => {
      throw new Error('database down');
    }),
  );
  assert.match(String(r.error), /database down/);
  assert.deepEqual(r.parts, ['response-metadata']);
});

test('a consumer that stops reading after the answer and before any usage: the zero, unfinished report', async () => {
  const reports: UsageReport[] = [];
  const metered = meteredProvider(provider(whole), async (u) => void reports.push(u));
  for await (const part of metered.stream(request)) if (part.type === 'response-metadata') break;
  assert.deepEqual(reports, [{ usage: ZERO_USAGE, final: false, requestId: 'req_1' }]);
});
