/**
 * Time to first token through each provider adapter against its emulator, and the adapter's own
 * overhead: the same request (a ~3 000-token system prompt, a few turns of history) streamed
 * through the adapter (`createAnthropicProvider`, `createOpenAICompatibleProvider`: request
 * mapping, stream parsing into StreamParts) and through the bare SDK (params built once, the SDK's
 * stream read to its first text delta), interleaved call by call on one loopback emulator each
 * (whole SSE events per write, no pacing). Figures per adapter: TTFT p50 / p95 through the
 * adapter and through the SDK, and the overhead — the median of the per-pair differences
 * (adapter − SDK), so drift of the machine cancels out. Goal: overhead ≤ 2 ms p50.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createAnthropicProvider } from '../activities/model/adapters/anthropic';
import { toAnthropicParams } from '../activities/model/adapters/anthropic-request';
import { createOpenAICompatibleProvider } from '../activities/model/adapters/openai-compatible';
import { toOpenAIParams } from '../activities/model/adapters/openai-compatible-request';
import { abilitiesFor } from '../core/model/abilities';
import type { ModelProvider, ModelRequest } from '../core/model/provider';
import { reply, startAnthropicEmulator } from '../test/emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator } from '../test/emulator/openai-emulator';
import { prng } from '../test/emulator/sse';

const CALLS = 200;
const WARMUP = 20;
const ANSWER = 'The moon drives the tides, twice a day, with the sun adding its smaller pull.';

function request(): ModelRequest {
  const rand = prng(3);
  const words = 'tide moon sun orbit gravity water coast wave lunar cycle'.split(' ');
  const prose = (n: number) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ');
  return {
    system: [{ text: prose(2_200), cache: true }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: prose(200) }] },
      { role: 'assistant', content: [{ type: 'text', text: prose(150) }] },
      { role: 'user', content: [{ type: 'text', text: prose(100), cache: true }] },
    ],
    maxTokens: 1024,
  };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function adapterTtft(provider: ModelProvider, req: ModelRequest): Promise<number> {
  const t0 = performance.now();
  let first = 0;
  for await (const part of provider.stream(req)) {
    if (part.type === 'text-delta' && first === 0) first = performance.now() - t0;
  }
  return first;
}

async function measure(
  adapter: () => Promise<number>,
  sdk: () => Promise<number>,
): Promise<{ adapter: number[]; sdk: number[]; diff: number[] }> {
  const out = { adapter: [] as number[], sdk: [] as number[], diff: [] as number[] };
  for (let i = 0; i < WARMUP + CALLS; i++) {
    // Alternate which goes first so neither always meets a warmer connection.
    const [a, s] = i % 2 === 0 ? [await adapter(), await sdk()] : (([y, x]) => [x, y])([await sdk(), await adapter()]);
    if (i < WARMUP) continue;
    out.adapter.push(a!);
    out.sdk.push(s!);
    out.diff.push(a! - s!);
  }
  return out;
}

export async function benchProviderTtft(): Promise<Record<string, number | string>> {
  const req = request();
  const figures: Record<string, number | string> = { calls_per_adapter: CALLS };
  const anthropicEmu = await startAnthropicEmulator({ wire: 'events' });
  const openaiEmu = await startOpenAIEmulator({ wire: 'chunks' });
  try {
    anthropicEmu.respond(() => reply.text(ANSWER));
    const aClient = new Anthropic({ baseURL: anthropicEmu.baseURL, apiKey: 'bench', maxRetries: 0 });
    const anthropic = createAnthropicProvider({ client: aClient, model: 'claude-sonnet-5-5', onWarning: () => {} });
    const aParams = toAnthropicParams(req, { model: 'claude-sonnet-5-5' }).params;
    const a = await measure(
      () => adapterTtft(anthropic, req),
      async () => {
        const t0 = performance.now();
        let first = 0;
        const stream = await aClient.messages.create(aParams);
        for await (const ev of stream) {
          if (first === 0 && ev.type === 'content_block_delta' && ev.delta.type === 'text_delta')
            first = performance.now() - t0;
        }
        return first;
      },
    );
    openaiEmu.respond(() => oreply.text(ANSWER));
    const oClient = new OpenAI({ baseURL: openaiEmu.baseURL, apiKey: 'bench', maxRetries: 0 });
    const openai = createOpenAICompatibleProvider({ client: oClient, model: 'gpt-4o-mini', onWarning: () => {} });
    const oParams = toOpenAIParams(req, {
      model: 'gpt-4o-mini',
      abilities: abilitiesFor('openai', 'gpt-4o-mini'),
      maxTokensField: 'max_tokens',
      streamUsage: true,
    }).params;
    const o = await measure(
      () => adapterTtft(openai, req),
      async () => {
        const t0 = performance.now();
        let first = 0;
        const stream = await oClient.chat.completions.create(oParams);
        for await (const chunk of stream) {
          if (first === 0 && chunk.choices[0]?.delta?.content) first = performance.now() - t0;
        }
        return first;
      },
    );
    for (const [name, m] of [
      ['anthropic', a],
      ['openai', o],
    ] as const) {
      figures[`${name}_adapter_ttft_p50_ms`] = r3(pct(m.adapter, 50));
      figures[`${name}_adapter_ttft_p95_ms`] = r3(pct(m.adapter, 95));
      figures[`${name}_sdk_ttft_p50_ms`] = r3(pct(m.sdk, 50));
      figures[`${name}_adapter_overhead_p50_ms`] = r3(pct(m.diff, 50));
      figures[`${name}_meets_goal_2ms`] = pct(m.diff, 50) <= 2 ? 'yes' : 'no';
    }
  } finally {
    await anthropicEmu.stop();
    await openaiEmu.stop();
  }
  return figures;
}

if (require.main === module) {
  benchProviderTtft().then(
    (f) => console.log(JSON.stringify(f, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
