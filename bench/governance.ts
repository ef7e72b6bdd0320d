/**
 * `npm run bench -- governance`: what governance costs (issue 30), on a real Temporal dev server
 * and Postgres, the worker in this process.
 *
 * - Waiting turns: N turns (DREACT_BENCH_GOV_TURNS, default 1 000) each call a tool that needs
 *   approval and wait for a person, all at once; the start is bounded in time
 *   (DREACT_BENCH_GOV_SECONDS, default 240 — the figures say how many reached the wait). Reported:
 *   history events and bytes of a waiting turn, worker resident memory per waiting turn, database
 *   rows per waiting turn, and that nothing polls (a sample of histories does not grow over 10 s;
 *   no activity is scheduled while waiting).
 * - Reservation latency: the spend-cap reservation a model call makes first (reserve + release,
 *   store/budget-store.ts), p50 / p95, with budgets covering the call and without.
 */
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { openDb, migrate, dropSchema } from '../store/db';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { createWorker } from '../workers/worker';
import { declareTool } from '../core/tools/registry';
import type { ToolImpl } from '../activities/tools/types';
import { releaseSpend, reserveSpend, setBudget } from '../store/budget-store';
import { percentile } from './stats';
import { approvalRequestCount, conversationRows } from '../store/governance-stats';

const TURNS = Number(process.env.DREACT_BENCH_GOV_TURNS ?? 1000);
const SECONDS = Number(process.env.DREACT_BENCH_GOV_SECONDS ?? 240);
const decision = (obj: unknown) =>
  `<channel:ReactDecisionOutV2>\`\`\`json\n${JSON.stringify(obj)}\n\`\`\`</channel:ReactDecisionOutV2>`;
const thinking = (t: string) => `<channel:thinking>${t}</channel:thinking>`;
const callTool = (toolId: string, params: Record<string, unknown>) =>
  thinking(`next: ${toolId}`) +
  decision({ action: 'call_tool', notes: `call ${toolId}`, tool_call: { tool_id: toolId, params } });
const complete = (answer: string) =>
  thinking('answering') + decision({ action: 'complete', notes: '', final_answer: answer });
const mb = (b: number) => Number((b / 1024 / 1024).toFixed(1));

const gated = {
  declaration: declareTool({
    id: 'bench.gated',
    description: 'A tool every call of which waits for approval.',
    params: z.object({ n: z.number() }),
    strategy: 'exploitation',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool bench.gated ${p.n}`,
    needsApproval: true,
  }),
  impl: { id: 'bench.gated', run: async () => ({ ok: true, text: 'ran' }) } satisfies ToolImpl,
};

export async function benchGovernance(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_gov_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-gov-${process.pid}`;
  const worker = await createWorker({
    connection: server.env.nativeConnection,
    namespace: server.namespace,
    db,
    taskQueue,
    defaultModel: { provider: 'scripted' },
    extraTools: [gated],
  });
  const running = worker.run();
  const client = new DreactClient(server.env.client, { taskQueue });
  const out: Record<string, number | string> = {};
  try {
    const script = { rounds: [callTool('bench.gated', { n: 1 }), complete('done')] };
    const options = { model: { provider: 'scripted' as const, script } };
    const waiting = () => approvalRequestCount(db.pool);
    global.gc?.();
    const idle = process.memoryUsage().rss;
    const t0 = Date.now();
    const deadline = t0 + SECONDS * 1000;
    const convs: string[] = [];
    for (let i = 0; i < TURNS && Date.now() < deadline; i += 50) {
      const batch = Array.from({ length: Math.min(50, TURNS - i) }, (_, k) => `gov_${process.pid}_${i + k}`);
      await Promise.all(batch.map((c) => client.startTurn(c, 'send it', options)));
      convs.push(...batch);
    }
    let reached = await waiting();
    while (reached < convs.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      reached = await waiting();
    }
    out['turns started'] = convs.length;
    out['turns waiting for approval'] = reached;
    out['seconds to reach the wait'] = Number(((Date.now() - t0) / 1000).toFixed(1));
    global.gc?.();
    const loaded = process.memoryUsage().rss;
    out['worker+client RSS idle / all waiting (MB)'] = `${mb(idle)} / ${mb(loaded)}`;
    out['RSS per waiting turn (KB, incl. cached workflow)'] = Number(
      ((loaded - idle) / 1024 / Math.max(1, reached)).toFixed(1),
    );

    // History of a waiting turn, and that it does not grow while it waits (nothing polls).
    const sample = convs.slice(0, 20).map((c) => `conv/${c}/turn/1`);
    const histories = async () =>
      Promise.all(sample.map((id) => server.env.client.workflow.getHandle(id).fetchHistory()));
    const before = await histories();
    const events = before.map((h) => h.events?.length ?? 0);
    const bytes = before.map((h) => temporal.api.history.v1.History.encode(h).finish().length);
    out['history events per waiting turn (p50)'] = percentile(events, 50);
    out['history bytes per waiting turn (p50 / max)'] = `${percentile(bytes, 50)} / ${Math.max(...bytes)}`;
    await new Promise((r) => setTimeout(r, 10_000));
    const after = await histories();
    const grew = after.filter((h, i) => (h.events?.length ?? 0) !== events[i]).length;
    out['histories grown over 10 s of waiting (of 20)'] = grew;

    // Database rows per waiting turn.
    const n = Math.max(1, convs.length);
    for (const table of ['timeline_blocks', 'stream_events', 'usage_ledger', 'turns', 'spend_reservations'] as const)
      out[`${table} rows per waiting turn`] = Number(((await conversationRows(db.pool, table, convs)) / n).toFixed(2));

    // Reservation latency (reserve + release around a model call), without and with budgets.
    const owner = { tenantId: 'bench', projectId: 'p', userId: 'u' };
    const measure = async (label: string, turnCapUsd?: number) => {
      const reserve: number[] = [];
      const release: number[] = [];
      for (let i = 0; i < 300; i++) {
        const callKey = `${label}/${i}`;
        const a = performance.now();
        const r = await reserveSpend(db.pool, {
          conversationId: convs[i % convs.length]!,
          turnId: 'turn_1',
          callKey,
          owner,
          amountUsd: 0.01,
          ttlSeconds: 60,
          ...(turnCapUsd !== undefined ? { turnCapUsd } : {}),
        });
        const b = performance.now();
        if (!r.ok) throw new Error(`bench reservation refused: ${r.refused.label}`);
        await releaseSpend(db.pool, convs[i % convs.length]!, callKey);
        release.push(performance.now() - b);
        reserve.push(b - a);
      }
      out[`reservation ${label}: reserve p50 / p95 (ms)`] = `${percentile(reserve, 50)} / ${percentile(reserve, 95)}`;
      out[`reservation ${label}: release p50 / p95 (ms)`] = `${percentile(release, 50)} / ${percentile(release, 95)}`;
    };
    await measure('no budget');
    for (const scope of ['tenant', 'project', 'user'] as const)
      for (const period of ['day', 'month'] as const)
        await setBudget(db.pool, {
          tenantId: 'bench',
          scope,
          scopeId: scope === 'tenant' ? '' : scope === 'project' ? 'p' : 'u',
          period,
          capUsd: 1_000,
        });
    await measure('6 budgets + turn cap', 1_000);
  } finally {
    worker.shutdown();
    await running.catch(() => undefined);
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
  return out;
}
