/**
 * Agent definitions at worker start: the worker process (compiled, as deployed) from spawn to
 * polling with 0 and with 20 agent files in DREACT_AGENTS_DIR (each with 2 KB of instructions, an
 * allow-list and limits), medians of 5 starts each, alternating; and, in process, what loading and
 * checking the 20 files and building their views costs. Nothing of this runs per round: a turn's
 * activities find the view memoised by hash.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, migrate, dropSchema } from '../store/db';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { spawnWorkerProcess } from './worker-process';
import { loadAgents } from '../activities/agents/loader';
import { createAgentViews } from '../activities/agents/view';
import { createToolRegistry } from '../core/tools';

const STARTS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function agentsDir(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), `dreact-bench-agents-${n}-`));
  for (let i = 1; i <= n; i++) {
    const name = `agent${String(i).padStart(2, '0')}`;
    writeFileSync(
      join(dir, `${name}.yaml`),
      [
        `name: ${name}`,
        `description: Bench agent ${i}.`,
        `instructions: |`,
        ...Array.from(
          { length: 24 },
          (_, k) => `  Rule ${k + 1} of agent ${i}: answer briefly, cite sources, keep notes.`,
        ),
        `tools:`,
        `  allow: [react.*, web_*, '!react.patch']`,
        `limits: { max_rounds: ${5 + (i % 10)}, context_max_tokens: 60000 }`,
        `multi_action: ${i % 2 ? 'off' : 'safe_fanout'}`,
      ].join('\n'),
    );
  }
  return dir;
}

export async function benchAgents(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_agents_${process.pid}` });
  await migrate(db);
  const dirs = { 0: agentsDir(0), 20: agentsDir(20) } as const;
  const times: Record<0 | 20, number[]> = { 0: [], 20: [] };
  try {
    for (let i = 0; i < STARTS; i++) {
      for (const n of [0, 20] as const) {
        const w = spawnWorkerProcess({
          TEMPORAL_ADDRESS: server.address,
          DREACT_DB_SCHEMA: db.schema,
          DATABASE_URL: db.databaseUrl,
          DREACT_TASK_QUEUE: `bench-agents-${process.pid}-${n}-${i}`,
          DREACT_AGENTS_DIR: dirs[n],
        });
        times[n].push(await w.ready);
        w.child.kill('SIGTERM');
        await w.exited;
      }
    }
    // In process: load + check the 20 files, build every view, store the versions.
    const registry = createToolRegistry();
    const t0 = performance.now();
    const catalogue = await loadAgents({ dir: dirs[20], toolIds: registry.ids(), env: {} });
    const t1 = performance.now();
    const views = createAgentViews(catalogue, registry, {
      model: { provider: 'scripted', maxTokens: 8192 },
      maxRounds: 15,
      contextMaxTokens: 80_000,
      multiAction: 'off',
      cacheTtlSeconds: 300,
    });
    views.list();
    const t2 = performance.now();
    await views.save(db.pool);
    const t3 = performance.now();
    // A round's lookup of its agent (memoised by hash).
    const ref = catalogue.get('agent07').ref;
    const n = 100_000;
    const t4 = performance.now();
    for (let i = 0; i < n; i++) await views.load(ref);
    const lookupUs = ((performance.now() - t4) / n) * 1000;
    const m0 = median(times[0]);
    const m20 = median(times[20]);
    return {
      'worker start, 0 agent files (median of 5, ms)': m0,
      'worker start, 20 agent files (median of 5, ms)': m20,
      'difference (ms)': m20 - m0,
      'in process: load + check 20 files (ms)': Number((t1 - t0).toFixed(1)),
      'in process: build 21 views (ms)': Number((t2 - t1).toFixed(1)),
      'in process: store 21 versions (ms)': Number((t3 - t2).toFixed(1)),
      "a round's view lookup by ref (µs, memoised)": Number(lookupUs.toFixed(3)),
    };
  } finally {
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
