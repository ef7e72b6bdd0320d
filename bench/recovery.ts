/**
 * Recovery after kill -9: a worker process runs a long turn (scripted model, tool rounds); the
 * bench kills it with SIGKILL at spread-out moments, starts a new one at once, and measures from
 * each kill to the next activity the turn completes (server clock, from history), plus the new
 * worker's time to poll. Bounded: 6 kills, one turn, loopback only; the turn must complete with no
 * duplicate blocks.
 */
import type { temporal } from '@temporalio/proto';
import { openDb, migrate, dropSchema } from '../store/db';
import { loadBlocks } from '../store/timeline-store';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { spawnWorkerProcess } from './worker-process';

const KILLS = 6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const evTime = (e: temporal.api.history.v1.IHistoryEvent) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

export async function benchRecovery(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_recovery_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-recovery-${process.pid}`;
  const workerEnv = {
    TEMPORAL_ADDRESS: server.address,
    DREACT_DB_SCHEMA: db.schema,
    DATABASE_URL: db.databaseUrl,
    DREACT_TASK_QUEUE: taskQueue,
  };
  const spawnWorker = () => spawnWorkerProcess(workerEnv);
  const api = new DreactClient(server.env.client, { taskQueue });
  const rounds = Array.from(
    // Long enough that every kill lands mid-turn even when recoveries are quick.
    { length: 60 },
    (_, i) =>
      `<channel:thinking>step ${i}</channel:thinking><channel:ReactDecisionOutV2>{"action":"call_tool","notes":"n","tool_call":{"tool_id":"react.write","params":{"path":"f${i}.md","channel":"internal","content":"${'x'.repeat(200)}","kind":"file"}}}</channel:ReactDecisionOutV2>`,
  ).concat(
    '<channel:thinking>done</channel:thinking><channel:ReactDecisionOutV2>{"action":"complete","notes":"","final_answer":"survived"}</channel:ReactDecisionOutV2>',
  );
  const conv = `bench_recovery_${process.pid}`;
  let w = spawnWorker();
  const startups: number[] = [await w.ready];
  const kills: number[] = [];
  try {
    const started = await api.startTurn(conv, 'a long turn', {
      maxRounds: 65,
      model: { provider: 'scripted', script: { rounds, chunkSize: 64, latencyMs: 25 } },
    });
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 900 + 350 * k));
      kills.push(Date.now());
      w.child.kill('SIGKILL');
      await w.exited;
      w = spawnWorker();
      startups.push(await w.ready);
    }
    const result = await api.result(conv, started.turnIndex);
    if (result.answer !== 'survived') throw new Error(`the turn ended with ${JSON.stringify(result.answer)}`);
    const history = await server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
    const completed = (history.events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).map(evTime);
    const recover = kills.map((t) => (completed.find((c) => c > t) ?? NaN) - t);
    // A kill after the turn's last activity has nothing to recover: the turn must be longer.
    if (recover.some((ms) => !Number.isFinite(ms)))
      throw new Error(`a kill came after the turn's last activity (recoveries ${JSON.stringify(recover)})`);
    const blocks = await loadBlocks(db.pool, conv);
    // The same worker started from its TypeScript sources (tsx), for comparison with the compiled one.
    const fromSources: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = spawnWorkerProcess(workerEnv, { from: 'sources' });
      fromSources.push(await s.ready);
      s.child.kill('SIGKILL');
      await s.exited;
    }
    return {
      'recovery.kills': KILLS,
      'recovery.kill_to_next_completed_activity_ms (each kill)': recover.join(', '),
      'recovery.kill_to_next_completed_activity_median_ms': median(recover),
      'recovery.kill_to_next_completed_activity_max_ms': Math.max(...recover),
      'recovery.worker_start_to_polling_median_ms (compiled dist/worker.cjs, cached workflow bundle)': median(
        startups.slice(1),
      ),
      'recovery.worker_start_to_polling_median_ms from the TypeScript sources (tsx), for comparison':
        median(fromSources),
      'recovery.worker_first_start_ms': startups[0]!,
      'recovery.duplicate_blocks': blocks.length - new Set(blocks.map((b) => b.id)).size,
    };
  } finally {
    w.child.kill('SIGTERM');
    await w.exited;
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
