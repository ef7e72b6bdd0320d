/**
 * Per-round overhead of the turn loop (decide + tool activity, Postgres reads/writes, stream
 * publishing, render) with a zero-latency scripted model, against a bare no-op activity round
 * trip measured in the same run on the same Temporal dev server. Durations come from history
 * event timestamps (server clock).
 */
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { createTurnActivities } from '../activities/turn-activities';
import { openDb, migrate, dropSchema } from '../store/db';
import { builtinTools } from '../activities/tools';
import { createToolRegistry } from '../core/tools';
import { defaultProviderResolver } from '../workers/worker';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../client/stack/temporal-server';

const ROUNDS = 12;
const ts = (e: temporal.api.history.v1.IHistoryEvent) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2 : NaN;
};

/** Median run time (started → completed) of an activity type. */
function runTimes(history: temporal.api.history.v1.IHistory, type: string): number[] {
  const events = history.events ?? [];
  const scheduled = new Map<string, string>();
  const started = new Map<string, number>();
  const out: number[] = [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    if (e.activityTaskStartedEventAttributes)
      started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), ts(e));
    const done = e.activityTaskCompletedEventAttributes;
    if (done && scheduled.get(String(done.scheduledEventId)) === type)
      out.push(ts(e) - (started.get(String(done.scheduledEventId)) ?? ts(e)));
  }
  return out;
}

/** Gaps between consecutive ActivityTaskScheduled events of the given activity type. */
function gaps(history: temporal.api.history.v1.IHistory, type: string): number[] {
  const times = (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type)
    .map(ts);
  return times.slice(1).map((t, i) => t - times[i]!);
}

export async function benchTurnOverhead(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-${process.pid}`;
  const worker = await Worker.create({
    connection: server.env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: {
      ...createTurnActivities({
        db,
        provider: defaultProviderResolver(),
        tools: builtinTools(),
        registry: createToolRegistry(),
        multiAction: 'off',
        maxIterations: 15,
        contextMaxTokens: 80_000,
        now: () => new Date(),
      }),
      noop: async () => undefined,
    },
  });
  const api = new DreactClient(server.env.client, { taskQueue });
  const call = (i: number) =>
    `<channel:thinking>round ${i}</channel:thinking><channel:ReactDecisionOutV2>{"action":"call_tool","notes":"n${i}","tool_call":{"tool_id":"react.write","params":{"path":"f${i}.md","channel":"internal","content":"x","kind":"file"}}}</channel:ReactDecisionOutV2>`;
  const done =
    '<channel:thinking>done</channel:thinking><channel:ReactDecisionOutV2>{"action":"complete","notes":"","final_answer":"ok"}</channel:ReactDecisionOutV2>';
  try {
    return await worker.runUntil(async () => {
      // Same activity count as the turn (decide + runTool per round), so both run under the same
      // server/poller conditions (task pickup slows down after the first ~15 activities of a run).
      const noopHandle = await server.env.client.workflow.start('NoopRoundsWorkflow', {
        taskQueue,
        workflowId: `bench-noop-${process.pid}`,
        args: [2 * ROUNDS + 2],
      });
      await noopHandle.result();
      const noopGaps = gaps(await noopHandle.fetchHistory(), 'noop');
      const noop = median(noopGaps);
      const noopPair = median(
        noopGaps
          .slice(1)
          .map((g, i) => g + noopGaps[i]!)
          .filter((_, i) => i % 2 === 0),
      );

      const conv = `bench_${process.pid}`;
      const rounds = Array.from({ length: ROUNDS }, (_, i) => call(i + 1)).concat(done);
      const started = await api.startTurn(conv, 'benchmark', {
        maxIterations: ROUNDS + 2,
        model: { provider: 'scripted', script: { rounds, chunkSize: 4096, latencyMs: 0 } },
      });
      await api.result(conv, started.turnIndex);
      const history = await server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
      const round = median(gaps(history, 'decide'));
      const decideRun = median(runTimes(history, 'decide'));
      const toolRun = median(runTimes(history, 'runTool'));
      return {
        'turn.rounds': ROUNDS,
        'turn.round_median_ms': round,
        'noop.activity_roundtrip_median_ms': noop,
        'noop.two_activity_round_median_ms': noopPair,
        'turn.round_vs_two_noop_ratio': Number((round / noopPair).toFixed(2)),
        'turn.round_overhead_ms (round − two no-op activities)': round - noopPair,
        'turn.decide_activity_run_median_ms': decideRun,
        'turn.runTool_activity_run_median_ms': toolRun,
        'turn.orchestration_ms (round − activity run times)': round - decideRun - toolRun,
      };
    });
  } finally {
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
