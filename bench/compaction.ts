/**
 * Compaction bench: a long conversation (default 200 turns × 6 rounds) on a 20 000-token budget,
 * through the real runtime (Temporal dev server, Postgres, worker) and the Anthropic adapter
 * (real SDK) against the local emulator with its prompt-cache accounting. Reports the peak input
 * tokens of any request (must stay ≤ the budget), the number of compactions, the compaction
 * calls' share of the cost, the cache-read share over the whole conversation (compaction
 * included), and the cut-planning time for 10 000 blocks.
 * DREACT_BENCH_COMPACTION_TURNS overrides the turn count.
 */
import { connectTemporalWorker } from '../client/temporal/connection';
import { openDb, migrate, dropSchema } from '../store/db';
import { createWorker } from '../workers/worker';
import { createAnthropicProvider } from '../activities/providers/anthropic';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { reply, startAnthropicEmulator, type RecordedRequest } from '../test/emulator/anthropic-emulator';
import { makeBlock, type Block } from '../core/timeline/block';
import { planCut } from '../core/compaction/cut';
import { usageByPurpose } from '../store/usage-store';
import { compactionCounts, compactionReductions } from '../store/compaction-store';

const BUDGET = 20_000;
const ROUNDS = 6;

const decision = (obj: unknown) =>
  `<channel:thinking>working</channel:thinking><channel:ReactDecisionOutV2>${JSON.stringify(obj)}</channel:ReactDecisionOutV2>`;
const iteration = (req: RecordedRequest) =>
  Number(/Iteration (\d+)\//.exec(JSON.stringify((req.body.messages as unknown[]).at(-1)))?.[1] ?? 1);

/** Median ms of planning a cut over `n` blocks (100 turns of n/100 blocks). */
export function cutPlanningMs(n: number): number {
  const ts = '2026-11-23T10:00:00.000Z';
  const blocks: Block[] = [];
  const perTurn = n / 100;
  for (let t = 1; t <= 100; t++) {
    const turnId = `turn_${t}`;
    blocks.push(makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts, key: 'h', text: '' }));
    blocks.push(
      makeBlock({
        type: 'user.prompt',
        author: 'user',
        turn_id: turnId,
        ts,
        key: 'p',
        text: `question ${t} `.repeat(20),
      }),
    );
    for (let i = 0; blocks.length < t * perTurn; i++) {
      const id = `tc_${(t * 1000 + i).toString(16).padStart(12, '0')}`;
      blocks.push(
        makeBlock({
          type: 'react.tool.call',
          author: 'assistant',
          turn_id: turnId,
          ts,
          key: id,
          call_id: id,
          text: '{"tool_id":"react.read"}',
        }),
      );
      blocks.push(
        makeBlock({
          type: 'react.tool.result',
          author: 'tool',
          turn_id: turnId,
          ts,
          key: id,
          call_id: id,
          text: 'result '.repeat(60),
        }),
      );
    }
  }
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const plan = planCut({
      blocks,
      currentTurnId: 'turn_100',
      budget: 20_000,
      systemTokens: 3_000,
      estimate: 500_000,
      charsPerToken: 4,
    });
    times.push(performance.now() - t0);
    if (plan.kind === 'none') throw new Error('the cut-planning bench planned nothing');
  }
  return Number(times.sort((a, b) => a - b)[2]!.toFixed(1));
}

export async function benchCompaction(): Promise<Record<string, number | string>> {
  const turns = Number(process.env.DREACT_BENCH_COMPACTION_TURNS ?? 200);
  const server = await startTemporalServer();
  const emu = await startAnthropicEmulator({ minCacheableTokens: 1024 });
  const db = openDb({ schema: `bench_compact_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-compact-${process.pid}`;
  const anthropic = createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'bench', model: 'claude-sonnet-5-5' });
  const connection = await connectTemporalWorker(server.connection);
  const worker = await createWorker({
    connection,
    namespace: server.namespace,
    db,
    taskQueue,
    provider: () => anthropic,
  });
  const api = new DreactClient(server.env.client, { taskQueue });
  emu.respond((req) => {
    if ((req.body.tool_choice as { name?: string } | undefined)?.name === 'conversation_title')
      return reply.toolUse('conversation_title', { title: 'Compaction bench' });
    const n = iteration(req);
    if (n < ROUNDS)
      return reply.text(
        decision({
          action: 'call_tool',
          notes: `step ${n}`,
          tool_call: {
            tool_id: 'react.write',
            params: {
              path: `notes/r${req.index}.md`,
              channel: 'internal',
              content: `finding ${req.index}: `.repeat(40),
              kind: 'file',
            },
          },
        }),
      );
    return reply.text(decision({ action: 'complete', notes: '', final_answer: `answer ${req.index}` }));
  });
  const conv = `bench_compact_${process.pid}`;
  const t0 = Date.now();
  try {
    await worker.runUntil(async () => {
      for (let t = 1; t <= turns; t++) {
        await api.startTurn(conv, `turn ${t}: research item ${t} and write down what you find`, {
          model: { provider: 'anthropic' },
          contextMaxTokens: BUDGET,
          maxRounds: ROUNDS + 2,
        });
        await api.result(conv, t);
      }
    });
    const decisions = emu.requests.filter((q) => !q.summarizer);
    const peak = Math.max(...emu.requests.map((q) => q.inputTokens));
    const ledger = await usageByPurpose(db.pool, conv);
    const sum = (k: 'costUsd' | 'inputTokens' | 'cacheReadTokens' | 'cacheWriteTokens') =>
      ledger.reduce((a, r) => a + r[k], 0);
    const compactionCost = ledger.find((r) => r.purpose === 'compaction')?.costUsd ?? 0;
    const compactions = await compactionCounts(db.pool, conv);
    const reductions = (await compactionReductions(db.pool, conv)).map((r) => 1 - r.after / r.before);
    const meanReduction = reductions.reduce((a, b) => a + b, 0) / Math.max(reductions.length, 1);
    return {
      'compaction.turns × rounds': `${turns} × ${ROUNDS}`,
      'compaction.budget_tokens': BUDGET,
      'compaction.peak_input_tokens (≤ budget)': peak,
      'compaction.requests (decisions + summaries)': `${decisions.length} + ${emu.requests.length - decisions.length}`,
      'compaction.compactions': Object.entries(compactions)
        .map(([status, n]) => `${status} ${n}`)
        .join(', '),
      'compaction.mean_request_reduction_per_compaction': Number(meanReduction.toFixed(3)),
      'compaction.cost_share_of_compaction_calls': Number((compactionCost / Math.max(sum('costUsd'), 1e-9)).toFixed(3)),
      'compaction.cache_read_share (whole conversation)': Number(
        (
          sum('cacheReadTokens') / Math.max(sum('inputTokens') + sum('cacheReadTokens') + sum('cacheWriteTokens'), 1)
        ).toFixed(3),
      ),
      'compaction.wall_s': Number(((Date.now() - t0) / 1000).toFixed(1)),
      'compaction.cut_planning_ms (10 000 blocks, median of 5)': cutPlanningMs(10_000),
    };
  } finally {
    await connection.close();
    await dropSchema(db);
    await db.close();
    await emu.stop();
    await server.stop();
  }
}
