/**
 * Eval suite throughput in replay mode: trials per minute at concurrency 1, 4 and 16, and where a
 * trial's wall time goes — its turns (the runtime: workflows, activities, Postgres, render, with
 * the model answered from the cassette in well under a millisecond) versus the eval machinery
 * around them (open the trial, start and wait for each turn, score from Postgres, feedback).
 * Seven starter cases (no web page or sandbox needed), recorded once, replayed with 4 trials each
 * (28 trials per run) on a real Temporal dev server and Postgres.
 */
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { openDb, migrate, dropSchema } from '../store/db';
import { createWorker } from '../workers/worker';
import { runEval } from '../apps/cli/eval-command';
import { percentile } from '../core/evals/aggregate';
import { projectFile } from '../store/project-files';
import { evalTrialTimings } from '../store/eval-store';

const CASES = [
  'answers-directly',
  'writes-notes',
  'plans-steps',
  'answers-json',
  'attachment-summary',
  'no-forbidden-tools',
  'judged-answer',
];

export async function benchEvals(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_evals_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-evals-${process.pid}`;
  const worker = await createWorker({
    connection: server.env.nativeConnection,
    namespace: server.namespace,
    db,
    taskQueue,
    defaultModel: { provider: 'scripted' },
    library: null,
    embeddings: null,
    deployment: null,
  });
  const running = worker.run();
  const dir = mkdtempSync(join(tmpdir(), 'bench-evals-'));
  const suite = join(dir, 'starter.yaml');
  writeFileSync(suite, readFileSync(projectFile('evals', 'starter.yaml'), 'utf8'));
  const target = { temporal: server.env.client, pool: db.pool, taskQueue };
  const figures: Record<string, number | string> = {};
  try {
    await runEval(target, { suite, mode: 'record', cases: CASES });
    for (const concurrency of [1, 4, 16]) {
      const t0 = Date.now();
      const { report } = await runEval(target, { suite, mode: 'replay', cases: CASES, trials: 4, concurrency });
      const minutes = (Date.now() - t0) / 60_000;
      if (report.exitCode !== 0) throw new Error(`bench run ${report.runId} failed a case`);
      figures[`trials/min, concurrency ${concurrency}`] = Math.round(report.summary.trials / minutes);
      if (concurrency === 1) {
        // Where a trial's time goes: its turns (the runtime) vs the eval machinery around them.
        const rows = await evalTrialTimings(db.pool, report.runId);
        const trial = rows.map((r) => r.trialMs);
        const share = rows.map((r) => r.turnsMs / r.trialMs);
        figures['trial wall p50 / p95 (ms), concurrency 1'] =
          `${Math.round(percentile(trial, 0.5))} / ${Math.round(percentile(trial, 0.95))}`;
        figures["runtime's (turns') share of a trial's wall, p50"] = `${Math.round(percentile(share, 0.5) * 100)} %`;
        figures['eval machinery per trial, p50 (ms)'] = Math.round(
          percentile(
            rows.map((r) => r.trialMs - r.turnsMs),
            0.5,
          ),
        );
      }
    }
  } finally {
    worker.shutdown();
    await running;
    await dropSchema(db);
    await db.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
