/**
 * Worker capacity from the environment, for a worker process sized to its load:
 *
 *   DREACT_MAX_CONCURRENT_ACTIVITIES      activity slots (default 200: a round's model call holds
 *                                         one for its whole stream, so in-flight turns need one each)
 *   DREACT_MAX_CONCURRENT_WORKFLOW_TASKS  workflow task slots (default 20: every workflow task runs
 *                                         on the one workflow thread, so more slots only queue tasks
 *                                         inside the worker while their 2 s timeout runs — 200 slots
 *                                         gave 844 start-to-close timeouts with 300 streaming turns,
 *                                         20 gave none, at the same or better throughput; bench load)
 *   DREACT_MAX_CACHED_WORKFLOWS           sticky workflow cache (default 1 000 turns)
 *   DREACT_DB_POOL_MAX                    Postgres connections of the worker (default 20)
 */
import type { WorkerOptions } from '@temporalio/worker';

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

export interface WorkerTuning {
  worker: Pick<
    WorkerOptions,
    'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
  >;
  dbPoolMax: number;
}

export function workerTuningFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  return {
    worker: {
      maxConcurrentActivityTaskExecutions: intFrom(env, 'DREACT_MAX_CONCURRENT_ACTIVITIES', 200, 1, 10_000),
      maxConcurrentWorkflowTaskExecutions: intFrom(env, 'DREACT_MAX_CONCURRENT_WORKFLOW_TASKS', 20, 2, 10_000),
      maxCachedWorkflows: intFrom(env, 'DREACT_MAX_CACHED_WORKFLOWS', 1_000, 0, 100_000),
    },
    dbPoolMax: intFrom(env, 'DREACT_DB_POOL_MAX', 20, 1, 1_000),
  };
}
