/**
 * Prompt-cache bench: a 10-turn conversation, 6 rounds (model calls) per turn, rendered with the
 * project's `renderTimeline` and sent through the Anthropic adapter + real SDK to the local
 * emulator (Anthropic cache rules: prefix hashes, 20-block look-back, 1024-token minimum, 5-minute
 * TTL on an injected clock advancing 20 s per call). Three breakpoint strategies on identical
 * content, each with a cold cache:
 *   renderer   — the renderer's breakpoints (system + previous turn + pre-tail + tail);
 *   tail_only  — only the renderer's tail checkpoint;
 *   last_block — one breakpoint on the very last content block (like automatic caching).
 * Figures: cache-read share of prompt tokens (goal ≥ 0.90 for `renderer`) and estimated cost
 * relative to no caching (core/model/pricing.ts). A second scenario with 12-round turns (longer
 * than the 20-block look-back) compares renderer vs tail_only where the extra checkpoints matter. Usage comes from the ledger, built from the
 * adapter's stream; the bench checks it equals the emulator's own accounting.
 *
 * The same 10 × 6 conversation also goes through the OpenAI-compatible adapter and the real
 * `openai` SDK to the OpenAI emulator (automatic prefix caching: no breakpoints, prefixes of
 * ≥ 1024 tokens at message boundaries, cached tokens in 128-token steps, same clock): its cached
 * share of prompt tokens (`prompt_tokens_details.cached_tokens` → cache reads in the ledger) and
 * cost against no caching at gpt-4o-mini prices.
 */
import { createAnthropicProvider } from '../activities/model/adapters/anthropic';
import { collectStream } from '../core/model/provider';
import { EMPTY_LEDGER, ledgerTotals, recordRound, totalsByTurn, type UsageLedger } from '../core/model/pricing';
import { renderTimeline } from '../core/timeline/render';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../test/emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../test/emulator/openai-emulator';
import { createOpenAICompatibleProvider } from '../activities/model/adapters/openai-compatible';
import { prng } from '../test/emulator/sse';

export const BENCH_TURNS = 10;
export const BENCH_ROUNDS = 6;
const LONG_ROUNDS = 12;
const MODEL = 'claude-sonnet-5-5';
const T0 = Date.parse('2026-11-21T10:00:00Z');
const STEP_MS = 20_000;

import { Conversation, prose, requestFor, systemPrompt, type Strategy } from './cache-conversation';

/** Turns that start `gapMs` after the previous one ended, on an agent with this cache TTL. */
interface IdleGaps {
  gapMs: number;
  ttlSeconds: number;
}

interface RunResult {
  ledger: UsageLedger;
  emulatorPromptTokens: number;
  emulatorReadTokens: number;
}

async function run(
  emu: AnthropicEmulator,
  strategy: Strategy,
  setClock: (ms: number) => void,
  turns = BENCH_TURNS,
  roundsPerTurn = BENCH_ROUNDS,
  system = systemPrompt(),
  idle?: IdleGaps,
): Promise<RunResult> {
  emu.reset();
  const provider = createAnthropicProvider({
    baseURL: emu.baseURL,
    apiKey: 'bench',
    model: MODEL,
    onWarning: (w) => {
      throw new Error(`unexpected warning: ${w.message}`);
    },
  });
  const conv = new Conversation();
  let ledger = EMPTY_LEDGER;
  let now = T0;
  let lastTouchAt: number | null = null;
  for (let t = 1; t <= turns; t++) {
    if (idle && t > 1) now += idle.gapMs;
    conv.startTurn(t, now);
    for (let r = 1; r <= roundsPerTurn; r++) {
      now += STEP_MS;
      setClock(now);
      const final = r === roundsPerTurn;
      if (!final) conv.startRound(t, r, now);
      const out = renderTimeline(
        {
          blocks: conv.blocks,
          currentTurnId: `turn_${t}`,
          systemPrompt: system,
          ...(idle ? { cacheState: { lastTouchAt } } : {}),
        },
        { now, ...(idle ? { ttl: { cacheTtlSeconds: idle.ttlSeconds } } : {}) },
      );
      if (out.pruning) {
        // What the round pipeline persists: the hidden replacements and the pruning notice.
        conv.prune(out.pruning.updates, out.pruning.contribute);
        lastTouchAt = out.cacheTouchAt;
      }
      emu.enqueue(final ? reply.text('{"action":"final"}') : reply.toolUse('web_search', { query: `t${t} r${r}` }));
      const request = requestFor(out, strategy);
      const res = await collectStream(
        provider.stream(idle ? { ...request, cacheTtlSeconds: idle.ttlSeconds } : request),
      );
      ledger = recordRound(ledger, { turnId: `turn_${t}`, round: r, model: MODEL, usage: res.usage });
      if (final) conv.finish(t, now);
      else conv.toolRound(t, r, now);
    }
  }
  let prompt = 0;
  let read = 0;
  for (const q of emu.requests) {
    prompt += q.accounting!.totalPromptTokens;
    read += q.accounting!.cacheReadTokens;
  }
  return { ledger, emulatorPromptTokens: prompt, emulatorReadTokens: read };
}

const OPENAI_MODEL = 'gpt-4o-mini';

/** The renderer's conversation through the OpenAI adapter (cache flags ignored: caching is automatic). */
async function runOpenAI(emu: OpenAIEmulator, setClock: (ms: number) => void): Promise<RunResult> {
  emu.reset();
  const provider = createOpenAICompatibleProvider({
    baseURL: emu.baseURL,
    apiKey: 'bench',
    model: OPENAI_MODEL,
    onWarning: (w) => {
      throw new Error(`unexpected warning: ${w.message}`);
    },
  });
  const conv = new Conversation();
  const system = systemPrompt();
  let ledger = EMPTY_LEDGER;
  let now = T0;
  for (let t = 1; t <= BENCH_TURNS; t++) {
    conv.startTurn(t, now);
    for (let r = 1; r <= BENCH_ROUNDS; r++) {
      now += STEP_MS;
      setClock(now);
      const final = r === BENCH_ROUNDS;
      if (!final) conv.startRound(t, r, now);
      const out = renderTimeline({ blocks: conv.blocks, currentTurnId: `turn_${t}`, systemPrompt: system }, { now });
      emu.enqueue(
        oreply.text(final ? '{"action":"final"}' : `{"action":"call_tool","tool":"web_search","q":"t${t} r${r}"}`),
      );
      const res = await collectStream(provider.stream(requestFor(out, 'renderer')));
      ledger = recordRound(ledger, {
        turnId: `turn_${t}`,
        round: r,
        model: OPENAI_MODEL,
        provider: 'openai',
        usage: res.usage,
      });
      if (final) conv.finish(t, now);
      else conv.toolRound(t, r, now);
    }
  }
  let prompt = 0;
  let read = 0;
  for (const q of emu.requests) {
    prompt += q.accounting!.promptTokens;
    read += q.accounting!.cachedTokens;
  }
  return { ledger, emulatorPromptTokens: prompt, emulatorReadTokens: read };
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

export async function benchCache(): Promise<Record<string, number | string>> {
  let clock = T0;
  const emu = await startAnthropicEmulator({ now: () => clock });
  const figures: Record<string, number | string> = {
    model: MODEL,
    turns: BENCH_TURNS,
    rounds_per_turn: BENCH_ROUNDS,
    calls_per_strategy: BENCH_TURNS * BENCH_ROUNDS,
  };
  try {
    for (const strategy of ['renderer', 'tail_only', 'last_block'] as const) {
      const { ledger, emulatorPromptTokens, emulatorReadTokens } = await run(emu, strategy, (ms) => (clock = ms));
      const tot = ledgerTotals(ledger);
      const u = tot.usage;
      if (
        u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens !== emulatorPromptTokens ||
        u.cacheReadTokens !== emulatorReadTokens
      ) {
        throw new Error(`${strategy}: ledger usage differs from the emulator's accounting`);
      }
      const steady = totalsByTurn(ledger).slice(1);
      const steadyRead = steady.reduce((a, x) => a + x.usage.cacheReadTokens, 0);
      const steadyPrompt = steady.reduce(
        (a, x) => a + x.usage.inputTokens + x.usage.cacheReadTokens + x.usage.cacheWriteTokens,
        0,
      );
      figures[`${strategy}_cache_read_share`] = round4(tot.cacheReadRatio);
      figures[`${strategy}_cache_read_share_turns_2_10`] = round4(steadyRead / steadyPrompt);
      figures[`${strategy}_cache_write_share`] = round4(
        u.cacheWriteTokens / (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens),
      );
      figures[`${strategy}_cost_usd`] = round4(tot.cost);
      figures[`${strategy}_cost_vs_no_cache`] = round4(tot.cost / tot.costWithoutCache);
      if (strategy === 'renderer') {
        figures.prompt_tokens_total = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
        figures.no_cache_cost_usd = round4(tot.costWithoutCache);
      }
    }
    // Long turns (12 rounds ≈ 35 blocks per turn, beyond the 20-block look-back): where the
    // renderer's previous-turn / pre-tail checkpoints matter.
    for (const strategy of ['renderer', 'tail_only'] as const) {
      const { ledger } = await run(emu, strategy, (ms) => (clock = ms), BENCH_TURNS, LONG_ROUNDS);
      const tot = ledgerTotals(ledger);
      figures[`long_turns_${strategy}_cache_read_share`] = round4(tot.cacheReadRatio);
      figures[`long_turns_${strategy}_cost_vs_no_cache`] = round4(tot.cost / tot.costWithoutCache);
    }
    // An agent with `limits.cache_ttl_seconds: 3600` against the default 300, turns 10 minutes
    // apart: the hour-long cache (Anthropic `ttl: '1h'`) is still warm at each next turn; the
    // 5-minute one went cold and TTL pruning shortened the old turns.
    for (const ttlSeconds of [3600, 300]) {
      const { ledger } = await run(emu, 'renderer', (ms) => (clock = ms), BENCH_TURNS, BENCH_ROUNDS, systemPrompt(), {
        gapMs: 10 * 60_000,
        ttlSeconds,
      });
      const tot = ledgerTotals(ledger);
      figures[`ten_minute_gaps_ttl_${ttlSeconds}_cache_read_share`] = round4(tot.cacheReadRatio);
      figures[`ten_minute_gaps_ttl_${ttlSeconds}_cost_vs_no_cache`] = round4(tot.cost / tot.costWithoutCache);
    }
    figures.renderer_meets_goal_0_90 = Number(figures.renderer_cache_read_share) >= 0.9 ? 'yes' : 'no';
    // An agent's instructions (≈ 1,000 tokens) preface the system prompt (core/decision/prompt.ts):
    // they ride in the cached system block, so the read share holds.
    {
      const instructions = `You are Acme's support assistant.\n${prose(prng(7), 4000)}`;
      const { ledger } = await run(
        emu,
        'renderer',
        (ms) => (clock = ms),
        BENCH_TURNS,
        BENCH_ROUNDS,
        `${instructions}\n\n${systemPrompt()}`,
      );
      figures.renderer_with_agent_instructions_cache_read_share = round4(ledgerTotals(ledger).cacheReadRatio);
    }
    // The OpenAI-compatible adapter on automatic prefix caching, the same conversation and clock.
    const openaiEmu = await startOpenAIEmulator({ now: () => clock });
    try {
      const { ledger, emulatorPromptTokens, emulatorReadTokens } = await runOpenAI(openaiEmu, (ms) => (clock = ms));
      const tot = ledgerTotals(ledger);
      const u = tot.usage;
      if (u.inputTokens + u.cacheReadTokens !== emulatorPromptTokens || u.cacheReadTokens !== emulatorReadTokens)
        throw new Error("openai: ledger usage differs from the emulator's accounting");
      const steady = totalsByTurn(ledger).slice(1);
      const steadyRead = steady.reduce((a, x) => a + x.usage.cacheReadTokens, 0);
      const steadyPrompt = steady.reduce((a, x) => a + x.usage.inputTokens + x.usage.cacheReadTokens, 0);
      figures.openai_model = OPENAI_MODEL;
      figures.openai_cache_read_share = round4(tot.cacheReadRatio);
      figures.openai_cache_read_share_turns_2_10 = round4(steadyRead / steadyPrompt);
      figures.openai_prompt_tokens_total = u.inputTokens + u.cacheReadTokens;
      figures.openai_cost_usd = round4(tot.cost);
      figures.openai_cost_vs_no_cache = round4(tot.cost / tot.costWithoutCache);
      figures.openai_ledger_matches_emulator = 'yes';
    } finally {
      await openaiEmu.stop();
    }
    figures.ledger_matches_emulator = 'yes';
  } finally {
    await emu.stop();
  }
  return figures;
}

if (require.main === module) {
  benchCache().then(
    (f) => console.log(JSON.stringify(f, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
