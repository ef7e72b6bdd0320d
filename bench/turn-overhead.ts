/**
 * Per-round overhead of the turn loop (decide + tool activity, Postgres reads/writes, stream
 * publishing, render) with a zero-latency scripted model, against a bare no-op activity round
 * trip measured in the same run on the same Temporal dev server. Durations come from history
 * event timestamps (server clock). On the embedded stack (`dreact dev`) the round is measured both
 * with the scripted model and through the real Anthropic SDK against the emulator at zero latency
 * (issue 42: the goal, 1.5 × two no-op activity round trips + 5 ms, is for the latter).
 */
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { createTurnActivities } from '../activities/turn-activities';
import { createViewCache } from '../store/view-cache';
import { countStatements } from '../test/support/count-statements';
import { openDb, migrate, dropSchema } from '../store/db';
import { createActivityDeps } from '../activities/create-deps';
import { toolBox } from '../activities/ports';
import { builtinTools } from '../activities/tools';
import { createToolRegistry } from '../core/tools';
import { defaultProviderResolver } from '../workers/worker';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { startEmbeddedStack } from '../apps/stack/embedded';
import { startAnthropicEmulator, type AnthropicEmulator } from '../test/emulator/anthropic-emulator';
import { noteReply } from '../test/support/note-turns';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

const call = (i: number) =>
  `<channel:thinking>round ${i}</channel:thinking><channel:ReactDecisionOutV2>{"action":"call_tool","notes":"n${i}","tool_call":{"tool_id":"react.write","params":{"path":"f${i}.md","channel":"internal","content":"x","kind":"file"}}}</channel:ReactDecisionOutV2>`;
const done =
  '<channel:thinking>done</channel:thinking><channel:ReactDecisionOutV2>{"action":"complete","notes":"","final_answer":"ok"}</channel:ReactDecisionOutV2>';
const SCRIPT = {
  rounds: Array.from({ length: ROUNDS }, (_, i) => call(i + 1)).concat(done),
  chunkSize: 4096,
  latencyMs: 0,
};

/**
 * The same turn on the embedded stack `npm run demo` / `dreact dev` start (the dev server on its
 * SQLite file, the default worker): median round and decide run time. Its database is the embedded
 * Postgres server (the default), PGlite served over the wire protocol (DREACT_EMBEDDED_DB=pglite),
 * or `databaseUrl` (the configured Postgres, in a schema of its own).
 */
async function embeddedRound(
  database: 'postgres' | 'pglite' | { databaseUrl: string },
  /** The model of the turns: the scripted one, or the real Anthropic SDK against this emulator (zero latency). */
  anthropic?: AnthropicEmulator,
): Promise<{
  round: number;
  decideRun: number;
}> {
  const home = mkdtempSync(join(tmpdir(), 'dreact-bench-embedded-'));
  const saved = {
    url: process.env.DATABASE_URL,
    schema: process.env.DREACT_DB_SCHEMA,
    embedded: process.env.DREACT_EMBEDDED_DB,
    anthropicUrl: process.env.ANTHROPIC_BASE_URL,
    anthropicKey: process.env.ANTHROPIC_API_KEY,
  };
  if (anthropic) {
    // As a user's `dreact dev` reaches the API: the worker's provider reads these (activities/providers/registry.ts).
    process.env.ANTHROPIC_BASE_URL = anthropic.baseURL;
    process.env.ANTHROPIC_API_KEY = 'bench-turn';
  }
  const schema = `bench_embedded_${process.pid}`;
  const databaseUrl = typeof database === 'object' ? database.databaseUrl : undefined;
  if (typeof database === 'object') {
    process.env.DATABASE_URL = database.databaseUrl;
    process.env.DREACT_DB_SCHEMA = schema;
  } else {
    delete process.env.DATABASE_URL; // an embedded database
    process.env.DREACT_EMBEDDED_DB = database;
  }
  const restore = (name: string, value: string | undefined) =>
    value === undefined ? delete process.env[name] : (process.env[name] = value);
  try {
    const stack = await startEmbeddedStack({ home, ui: false, log: () => undefined });
    try {
      const api = new DreactClient(stack.client);
      // One warm-up turn (JIT, caches), then the measured one.
      for (const conv of ['bench_embedded_warm', 'bench_embedded']) {
        const started = await api.startTurn(conv, 'benchmark', {
          maxRounds: ROUNDS + 2,
          model: anthropic ? { provider: 'anthropic' } : { provider: 'scripted', script: SCRIPT },
        });
        await api.result(conv, started.turnIndex);
        if (conv === 'bench_embedded') {
          const history = await stack.client.workflow.getHandle(started.workflowId).fetchHistory();
          return { round: median(gaps(history, 'decide')), decideRun: median(runTimes(history, 'decide')) };
        }
      }
      throw new Error('unreachable');
    } finally {
      if (databaseUrl) await dropSchema(stack.db);
      await stack.stop();
    }
  } finally {
    restore('DATABASE_URL', saved.url);
    restore('DREACT_DB_SCHEMA', saved.schema);
    restore('DREACT_EMBEDDED_DB', saved.embedded);
    restore('ANTHROPIC_BASE_URL', saved.anthropicUrl);
    restore('ANTHROPIC_API_KEY', saved.anthropicKey);
    rmSync(home, { recursive: true, force: true });
  }
}

export async function benchTurnOverhead(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_${process.pid}` });
  await migrate(db);
  const worker = (taskQueue: string, localTools: boolean) =>
    Worker.create({
      connection: server.env.nativeConnection,
      namespace: server.namespace,
      taskQueue,
      workflowsPath: require.resolve('./workflows'),
      activities: {
        ...createTurnActivities(
          createActivityDeps({
            db,
            provider: defaultProviderResolver(),
            tools: toolBox({ registry: createToolRegistry({ localTools }), impls: builtinTools() }),
            // As the deployed worker (workers/worker.ts): a warm round reads only new rows.
            viewCache: createViewCache(),
            now: () => new Date(),
          }),
        ),
        noop: async () => undefined,
      },
    });
  /** One 12-round turn; the tool (react.write) runs as a local activity or as a regular one. */
  const turn = async (localTools: boolean) => {
    const taskQueue = `bench-${process.pid}-${localTools ? 'local' : 'remote'}`;
    const api = new DreactClient(server.env.client, { taskQueue });
    const w = await worker(taskQueue, localTools);
    const statements = countStatements(db.pool);
    const measured = await w.runUntil(async () => {
      const conv = `bench_${process.pid}_${localTools ? 'local' : 'remote'}`;
      const started = await api.startTurn(conv, 'benchmark', {
        maxRounds: ROUNDS + 2,
        model: { provider: 'scripted', script: SCRIPT },
      });
      await api.result(conv, started.turnIndex);
      const history = await server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
      return {
        round: median(gaps(history, 'decide')),
        decideRun: median(runTimes(history, 'decide')),
        toolRun: localTools ? NaN : median(runTimes(history, 'runTool')),
      };
    });
    return { ...measured, statementsPerRound: Number((statements.stop() / ROUNDS).toFixed(1)) };
  };
  try {
    // Same activity count as the turn (decide + runTool per round), so both run under the same
    // server/poller conditions (task pickup slows down after the first ~15 activities of a run).
    const noopQueue = `bench-${process.pid}-noop`;
    const noopGaps = await (
      await worker(noopQueue, false)
    ).runUntil(async () => {
      const handle = await server.env.client.workflow.start('NoopRoundsWorkflow', {
        taskQueue: noopQueue,
        workflowId: `bench-noop-${process.pid}`,
        args: [2 * ROUNDS + 2],
      });
      await handle.result();
      return gaps(await handle.fetchHistory(), 'noop');
    });
    const noop = median(noopGaps);
    const noopPair = median(
      noopGaps
        .slice(1)
        .map((g, i) => g + noopGaps[i]!)
        .filter((_, i) => i % 2 === 0),
    );
    const remote = await turn(false);
    const local = await turn(true);
    const embedded = await embeddedRound('postgres');
    // The same round through the real provider SDK (its HTTP stream and parsing) against the
    // Anthropic emulator at zero latency, one SSE event per write: what a user's round costs beyond the scripted path.
    const emulator = await startAnthropicEmulator({ wire: 'events', chunkDelayMs: 0 });
    emulator.respond((req) => noteReply(req.body, ROUNDS + 1));
    const embeddedSdk = await embeddedRound('postgres', emulator).finally(() => emulator.stop());
    const embeddedPglite = await embeddedRound('pglite');
    const embeddedExternal = await embeddedRound({ databaseUrl: db.databaseUrl });
    const goal = 1.5 * noopPair + 5;
    return {
      'turn.rounds': ROUNDS,
      'noop.activity_roundtrip_median_ms': noop,
      'noop.two_activity_round_median_ms': noopPair,
      'goal.round_ms (1.5 × two no-op activities + 5)': goal,
      'turn.local_tools.round_median_ms': local.round,
      'turn.local_tools.round_vs_two_noop_ratio': Number((local.round / noopPair).toFixed(2)),
      'turn.local_tools.decide_activity_run_median_ms': local.decideRun,
      'turn.local_tools.orchestration_ms (round − decide run, incl. the local tool)': local.round - local.decideRun,
      'turn.local_tools.meets_goal': local.round <= goal ? 'yes' : 'no',
      'turn.local_tools.postgres_statements_per_round (the whole turn’s / rounds)': local.statementsPerRound,
      'turn.activity_tools.round_median_ms': remote.round,
      'turn.activity_tools.round_vs_two_noop_ratio': Number((remote.round / noopPair).toFixed(2)),
      'turn.activity_tools.decide_activity_run_median_ms': remote.decideRun,
      'turn.activity_tools.runTool_activity_run_median_ms': remote.toolRun,
      'turn.activity_tools.orchestration_ms (round − activity run times)':
        remote.round - remote.decideRun - remote.toolRun,
      'turn.activity_tools.meets_goal': remote.round <= goal ? 'yes' : 'no',
      'turn.activity_tools.postgres_statements_per_round': remote.statementsPerRound,
      'embedded.round_median_ms (embedded Postgres + dev server on file, the default)': embedded.round,
      'embedded.round_vs_two_noop_ratio': Number((embedded.round / noopPair).toFixed(2)),
      'embedded.meets_goal': embedded.round <= goal ? 'yes' : 'no',
      'embedded.decide_activity_run_median_ms': embedded.decideRun,
      'embedded_sdk.round_median_ms (the real Anthropic SDK, zero-latency emulator)': embeddedSdk.round,
      'embedded_sdk.round_vs_two_noop_ratio': Number((embeddedSdk.round / noopPair).toFixed(2)),
      'embedded_sdk.meets_goal (≤ 1.5 × two no-op activities + 5)': embeddedSdk.round <= goal ? 'yes' : 'no',
      'embedded_sdk.decide_activity_run_median_ms': embeddedSdk.decideRun,
      'embedded_sdk.over_the_scripted_round_ms': Number((embeddedSdk.round - embedded.round).toFixed(1)),
      'embedded_pglite.round_median_ms (DREACT_EMBEDDED_DB=pglite)': embeddedPglite.round,
      'embedded_pglite.decide_activity_run_median_ms': embeddedPglite.decideRun,
      'embedded_with_database_url.round_median_ms (DATABASE_URL: the system Postgres)': embeddedExternal.round,
      'embedded_with_database_url.decide_activity_run_median_ms': embeddedExternal.decideRun,
    };
  } finally {
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
