/**
 * `npm run bench -- load`: many concurrent conversations on ONE worker process (workers/main.ts,
 * as deployed), on a real Temporal dev server and Postgres.
 *
 * N conversations (10, 100, 300) each run one turn of ROUNDS decision rounds (two react.write
 * calls, then the answer), all started at once — with zero latency, then a second turn of the same
 * conversations (a later turn: the conversation workflow is running, the title exists) — under
 * two model profiles:
 * - zero latency: the scripted model answers at once;
 * - realistic: the Anthropic API emulator through the real SDK, first token after 400 ms, then
 *   60 tokens/s (a decision of ~230 output tokens takes ~4.2 s), one SSE event per socket write.
 *
 * Reported: decision rounds per second, round overhead p50 / p95 (a round's wall time — from one
 * decide to the next — minus its model time), worker CPU (all threads) and peak resident memory,
 * memory per in-flight turn (peak − idle, over N), Postgres connections open and active, the dev
 * server's and this process's (emulator + client) CPU and how busy the whole machine was (is the
 * worker or the machine the limit), and, with
 * realistic latency, the wall time against the ideal (every conversation's model time back to
 * back, no overhead). Bounded, loopback only; the worker and server stop at the end.
 */
import { temporal } from '@temporalio/proto';
import { openDb, migrate, dropSchema, type Db } from '../store/db';
import { DreactClient } from '../client/api';
import { connectionsInUse } from '../store/storage-stats';
import { backendCpuReader, likeLiteral, withApplicationName } from './postgres-backends';
import { loadServerKinds, startLoadServer, type LoadServer, type LoadServerKind } from './load-server';
import { startAnthropicEmulator, type AnthropicEmulator } from '../test/emulator/anthropic-emulator';
import { isDecisionRequest, noteReply } from '../test/support/note-turns';
import { loadPeer, runFigures } from './peers';
import {
  cpuByCommandLine,
  cpuDelta,
  cpuSeconds,
  machineCpuTicks,
  residentBytes,
  spawnWorkerProcess,
  type WorkerProcess,
} from './worker-process';

/** DREACT_BENCH_LOAD_SIZES (e.g. "100") and DREACT_BENCH_LOAD_PROFILES ("zero", "realistic") narrow a run. */
const SIZES = (process.env.DREACT_BENCH_LOAD_SIZES ?? '10,100,300').split(',').map(Number);
const PROFILES = (process.env.DREACT_BENCH_LOAD_PROFILES ?? 'zero,realistic').split(',');
/** DREACT_BENCH_LOAD_ROUNDS: decision rounds per turn (default 3: two notes, then the answer). */
const ROUNDS = Number(process.env.DREACT_BENCH_LOAD_ROUNDS ?? 3);
const PACE = { firstTokenMs: 400, tokensPerSecond: 60 };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const evTime = (e: temporal.api.history.v1.IHistoryEvent) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
const mb = (b: number) => Number((b / 1024 / 1024).toFixed(1));

interface Run {
  wallMs: number;
  roundGaps: number[];
  /** Workflow tasks that timed out after the worker took them (start-to-close). */
  workflowTaskTimeouts: number;
  /** Workflow tasks the worker did not poll from its sticky queue in time (they moved to the shared queue). */
  stickyTimeouts: number;
  /** Activities that completed on a retry (a heartbeat timeout under load shows here). */
  retriedActivities: number;
  /** Why those activities were retried: the previous attempt's failure (e.g. "heartbeat timeout"), counted. */
  retryCauses: Map<string, number>;
  cpuSeconds: number;
  /** CPU seconds of each Temporal server process over the run (the dev server; or frontend, history-0, …). */
  serverCpuSeconds: Record<string, number>;
  /** CPU seconds of the Temporal server's own Postgres backends (production server; undefined on SQLite). */
  serverBackendsCpuSeconds?: number;
  /** Share of the whole machine's CPU (all cores) that was busy over the run. */
  machineBusy: number;
  /** This process's CPU seconds: the model emulator, the client starting and awaiting turns, the sampler. */
  benchCpuSeconds: number;
  /** CPU seconds of every Postgres process (the backends serving the worker, the bench and the server's own). */
  postgresCpuSeconds: number;
  /** CPU seconds of the Postgres backends serving the worker (by application_name): other clients of a shared server excluded. */
  workerBackendsCpuSeconds: number;
  /** Events in the turns' histories (turn workflows only, not the conversation's or the persist child's). */
  historyEvents: number;
  idleRss: number;
  peakRss: number;
  peakConnections: number;
  peakActive: number;
}

async function runLoad(
  server: LoadServer,
  db: Db,
  worker: WorkerProcess & { applicationName: string },
  api: DreactClient,
  n: number,
  model: Record<string, unknown>,
  tag: string,
): Promise<Run> {
  const pid = worker.child.pid!;
  const idleRss = residentBytes(pid);
  const cpu0 = cpuSeconds(pid);
  const serverCpu0 = server.cpu();
  const self0 = process.cpuUsage();
  const postgres0 = cpuByCommandLine('postgres:');
  const machine0 = machineCpuTicks();
  let peakRss = idleRss;
  let peakConnections = 0;
  let peakActive = 0;
  let sampling = true;
  const backends = await backendCpuReader(db, likeLiteral(worker.applicationName));
  const serverBackends = server.postgresBackends ? await backendCpuReader(db, server.postgresBackends) : undefined;
  const sampler = (async () => {
    // Stops when the worker is gone: the run then fails with the worker's log (below).
    while (sampling && worker.child.exitCode === null && worker.child.signalCode === null) {
      peakRss = Math.max(peakRss, residentBytes(pid));
      await backends.sample();
      await serverBackends?.sample();
      const c = await connectionsInUse(db);
      peakConnections = Math.max(peakConnections, c.open);
      peakActive = Math.max(peakActive, c.active);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const t0 = Date.now();
  const started = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      api.startTurn(`load_${tag}_${n}_${i}`, 'write the notes', { maxRounds: ROUNDS + 2, model }),
    ),
  );
  // A worker that dies mid-run fails the bench with its own words, not with a missing /proc entry.
  const died = worker.exited.then((how) => {
    throw new Error(`the worker exited (${String(how)}) during the run:\n${worker.log().slice(-3000)}`);
  });
  const results = await Promise.race([
    Promise.all(started.map((s, i) => api.result(`load_${tag}_${n}_${i}`, s.turnIndex))),
    died,
  ]);
  const wallMs = Date.now() - t0;
  sampling = false;
  await sampler;
  await backends.sample();
  await serverBackends?.sample();
  const cpu = cpuSeconds(pid) - cpu0;
  const serverCpuSeconds = Object.fromEntries(
    Object.entries(server.cpu()).map(([name, t]) => [name, t - (serverCpu0[name] ?? 0)]),
  );
  const self = process.cpuUsage(self0);
  const postgresCpuSeconds = cpuDelta(postgres0, cpuByCommandLine('postgres:'));
  const benchCpuSeconds = (self.user + self.system) / 1e6;
  const machine1 = machineCpuTicks();
  const machineBusy = (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total);
  const wrong = results.filter((r) => r.rounds !== ROUNDS);
  if (wrong.length) throw new Error(`${wrong.length} turns did not run ${ROUNDS} rounds (e.g. ${wrong[0]!.rounds})`);
  const roundGaps: number[] = [];
  let workflowTaskTimeouts = 0;
  let stickyTimeouts = 0;
  let retriedActivities = 0;
  const retryCauses = new Map<string, number>();
  let historyEvents = 0;
  for (const s of started) {
    const history = await server.client.workflow.getHandle(s.workflowId).fetchHistory();
    historyEvents += history.events?.length ?? 0;
    for (const e of history.events ?? []) {
      const timedOut = e.workflowTaskTimedOutEventAttributes;
      // SCHEDULE_TO_START: the sticky queue's 1 s passed before the worker polled it; else start-to-close.
      if (timedOut?.timeoutType === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) stickyTimeouts++;
      else if (timedOut) workflowTaskTimeouts++;
      const started = e.activityTaskStartedEventAttributes;
      if ((started?.attempt ?? 1) > 1) {
        retriedActivities++;
        const cause = retryCause(started?.lastFailure);
        retryCauses.set(cause, (retryCauses.get(cause) ?? 0) + 1);
      }
    }
    const decides = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide')
      .map(evTime);
    for (let i = 1; i < decides.length; i++) roundGaps.push(decides[i]! - decides[i - 1]!);
  }
  return {
    wallMs,
    roundGaps,
    workflowTaskTimeouts,
    stickyTimeouts,
    retriedActivities,
    retryCauses,
    cpuSeconds: cpu,
    serverCpuSeconds,
    ...(serverBackends ? { serverBackendsCpuSeconds: serverBackends.cpuSeconds() } : {}),
    machineBusy,
    benchCpuSeconds,
    postgresCpuSeconds,
    workerBackendsCpuSeconds: backends.cpuSeconds(),
    historyEvents,
    idleRss,
    peakRss,
    peakConnections,
    peakActive,
  };
}

function figures(prefix: string, n: number, run: Run, modelMs: number): Record<string, number | string> {
  const overhead = run.roundGaps.map((g) => g - modelMs);
  // CPU per decision round by component: what a round costs the machine, whatever the wall time.
  const perRound = (seconds: number) => (seconds * 1000) / (n * ROUNDS);
  const serverNames = Object.keys(run.serverCpuSeconds);
  const parts: Array<[string, number]> = [
    ['worker', run.cpuSeconds],
    ...serverNames.map((name): [string, number] => [name, run.serverCpuSeconds[name]!]),
    ["Postgres (the worker's backends)", run.workerBackendsCpuSeconds],
    ...(run.serverBackendsCpuSeconds !== undefined
      ? [["Postgres (the Temporal server's backends)", run.serverBackendsCpuSeconds] as [string, number]]
      : []),
  ];
  const components = parts.map(([, seconds]) => perRound(seconds));
  const sum = components.reduce((a, b) => a + b, 0);
  const ofOneCore = (seconds: number) => Math.round((seconds / (run.wallMs / 1000)) * 100);
  return {
    [`${prefix} ${n} conv: CPU ms per round: ${parts.map(([name]) => name).join(' / ')} / sum`]: [...components, sum]
      .map((x) => x.toFixed(1))
      .join(' / '),
    [`${prefix} ${n} conv: turn history events per round`]: Number((run.historyEvents / (n * ROUNDS)).toFixed(1)),
    [`${prefix} ${n} conv: rounds/s`]: Number(((n * ROUNDS) / (run.wallMs / 1000)).toFixed(1)),
    [`${prefix} ${n} conv: wall s`]: Number((run.wallMs / 1000).toFixed(1)),
    [`${prefix} ${n} conv: round overhead p50 / p95 ms`]: `${Math.round(pct(overhead, 50))} / ${Math.round(pct(overhead, 95))}`,
    [`${prefix} ${n} conv: worker CPU % (of one core)`]: ofOneCore(run.cpuSeconds),
    ...Object.fromEntries(
      serverNames.map((name) => [
        `${prefix} ${n} conv: ${name} CPU % (of one core)`,
        ofOneCore(run.serverCpuSeconds[name]!),
      ]),
    ),
    [`${prefix} ${n} conv: bench process (emulator + client) CPU % (of one core)`]: Math.round(
      (run.benchCpuSeconds / (run.wallMs / 1000)) * 100,
    ),
    [`${prefix} ${n} conv: Postgres CPU % (of one core, all its processes, other clients included)`]: Math.round(
      (run.postgresCpuSeconds / (run.wallMs / 1000)) * 100,
    ),
    [`${prefix} ${n} conv: machine CPU busy % (both cores)`]: Math.round(run.machineBusy * 100),
    [`${prefix} ${n} conv: worker RSS idle / peak MB`]: `${mb(run.idleRss)} / ${mb(run.peakRss)}`,
    [`${prefix} ${n} conv: memory per in-flight turn MB`]: Number(
      ((run.peakRss - run.idleRss) / n / 1024 / 1024).toFixed(2),
    ),
    [`${prefix} ${n} conv: Postgres connections open / active (peak)`]: `${run.peakConnections} / ${run.peakActive}`,
    [`${prefix} ${n} conv: workflow task timeouts: sticky schedule-to-start / start-to-close; activities retried`]: `${run.stickyTimeouts} / ${run.workflowTaskTimeouts}; ${run.retriedActivities}${
      run.retryCauses.size ? ` (${[...run.retryCauses].map(([cause, count]) => `${count} ${cause}`).join(', ')})` : ''
    }`,
  };
}

/**
 * `npm run bench -- load [--server dev|production]`: the runs on the dev server; with
 * `--server production`, the same runs on the production server after them, in one run (figures
 * prefixed `dev:` / `production:`).
 */
export async function benchLoad(): Promise<Record<string, number | string>> {
  const kinds = loadServerKinds();
  const out: Record<string, number | string> = {};
  for (const kind of kinds) {
    const figures = await benchLoadOn(kind);
    for (const [k, v] of Object.entries(figures)) out[kinds.length > 1 ? `${kind}: ${k}` : k] = v;
  }
  return out;
}

async function benchLoadOn(kind: LoadServerKind): Promise<Record<string, number | string>> {
  const server = await startLoadServer(kind);
  const db = openDb({ schema: `bench_load_${process.pid}_${kind}` });
  await migrate(db);
  const taskQueue = `bench-load-${process.pid}-${kind}`;
  let emulator: AnthropicEmulator | undefined;
  let worker: (WorkerProcess & { applicationName: string }) | undefined;
  let stopPeer: (() => Promise<void>) | undefined;
  try {
    // One SSE event per write, as the API flushes them (the tests' 1–97-byte cuts prove the parser, not the load).
    emulator = await startAnthropicEmulator({ pace: PACE, wire: 'events' });
    emulator.respond((req) => noteReply(req.body, ROUNDS));
    // The worker's backends carry this application_name: their CPU is told apart from other clients'.
    const applicationName = `dreact-bench-load-${process.pid}`;
    const spawned = spawnWorkerProcess({
      ...server.workerEnv,
      DREACT_DB_SCHEMA: db.schema,
      DATABASE_URL: withApplicationName(db.databaseUrl, applicationName),
      DREACT_TASK_QUEUE: taskQueue,
      ANTHROPIC_API_KEY: 'load-bench',
      ANTHROPIC_BASE_URL: emulator.baseURL,
      DREACT_MAX_CONCURRENT_ACTIVITIES: process.env.DREACT_MAX_CONCURRENT_ACTIVITIES ?? '400',
      // Workflow task slots: the worker's default (20), or DREACT_MAX_CONCURRENT_WORKFLOW_TASKS from this environment.
      DREACT_DB_POOL_MAX: process.env.DREACT_DB_POOL_MAX ?? '40',
    });
    worker = { ...spawned, applicationName };
    const startupMs = await worker.ready;
    const api = new DreactClient(server.client, { taskQueue });
    const out: Record<string, number | string> = { 'load.worker start to polling ms': startupMs };

    // The script by name (built on the worker: activities/providers/note-script.ts), not in every decide input.
    const scripted = { provider: 'scripted', script: `notes-${ROUNDS}` };
    await runLoad(server, db, worker, api, 5, scripted, 'warm'); // JIT, bundle, pools
    // DREACT_BENCH_LOAD_PEER=off: without the @temporalio/ai-sdk peer (dev server only: it reads the server's metrics).
    const peer =
      kind === 'dev' && process.env.DREACT_BENCH_LOAD_PEER !== 'off' && server.metricsPort && server.pid
        ? await loadPeer(server, db, ROUNDS)
        : undefined;
    if (peer) stopPeer = peer.stop;
    /** The zero-latency first turns' wall time by size: the machine's work for those turns with no waiting. */
    const zeroWallMs = new Map<number, number>();
    for (const [i, n] of PROFILES.includes('zero') ? SIZES.entries() : []) {
      // A size given twice (DREACT_BENCH_LOAD_SIZES=100,100) is reported per run.
      const label = SIZES.indexOf(n) === i ? 'zero latency:' : `zero latency (run ${i + 1}):`;
      const first = await runLoad(server, db, worker, api, n, scripted, `zero${i}`);
      zeroWallMs.set(n, Math.min(zeroWallMs.get(n) ?? Infinity, first.wallMs));
      Object.assign(out, figures(label, n, first, 0));
      // The same conversations' next turn: no workflow start for the conversation, no title call —
      // what most turns of a real conversation cost.
      const next = SIZES.indexOf(n) === i ? 'zero latency, later turn:' : `zero latency, later turn (run ${i + 1}):`;
      const later = await runLoad(server, db, worker, api, n, scripted, `zero${i}`);
      Object.assign(out, figures(next, n, later, 0));
      // The peer beside us on the same server (bench/peers.ts): the same rounds on @temporalio/ai-sdk.
      if (peer) {
        const theirs = await peer.run(n, `zero${i}`);
        const ours = (r: Run) => (r.cpuSeconds + sumOf(r.serverCpuSeconds) + r.workerBackendsCpuSeconds) * 1000;
        const theirsMs = (theirs.cpu.worker + theirs.cpu.server) * 1000;
        Object.assign(out, runFigures(`ai-sdk peer: ${n} conv`, theirs), {
          [`zero latency: ${n} conv: CPU per round first / later turn ÷ the peer's`]: `${(ours(first) / theirsMs).toFixed(2)} / ${(ours(later) / theirsMs).toFixed(2)}`,
          [`zero latency: ${n} conv: rounds/s first / later turn ÷ the peer's`]: `${(theirs.wallMs / first.wallMs).toFixed(2)} / ${(theirs.wallMs / later.wallMs).toFixed(2)}`,
        });
      }
    }

    for (const n of PROFILES.includes('realistic') ? SIZES : []) {
      const before = emulator.requests.length;
      const run = await runLoad(server, db, worker, api, n, { provider: 'anthropic' }, 'real');
      const decisions = emulator.requests.slice(before).filter((r) => isDecisionRequest(r.body));
      const modelMs =
        decisions.reduce(
          (a, r) => a + PACE.firstTokenMs + ((r.usage?.output_tokens ?? 0) / PACE.tokensPerSecond) * 1000,
          0,
        ) / Math.max(1, decisions.length);
      Object.assign(out, figures('realistic:', n, run, modelMs));
      // Ideal: the turn's decision rounds back to back, no overhead at all (the title call runs beside
      // the first round and is shorter).
      const idealMs = modelMs * ROUNDS;
      out[`realistic: ${n} conv: model time per round ms`] = Math.round(modelMs);
      out[`realistic: ${n} conv: wall / ideal (goal ≤ 1.2 at 300)`] = Number((run.wallMs / idealMs).toFixed(2));
      // The floor this machine sets: the same turns with a zero-latency model (no streaming, no
      // waiting) took this long, and a realistic run does all of that work and more.
      const zero = zeroWallMs.get(n);
      if (zero !== undefined)
        out[`realistic: ${n} conv: floor — the zero-latency run's wall / ideal`] = Number((zero / idealMs).toFixed(2));
    }
    return out;
  } finally {
    await stopPeer?.();
    if (worker) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await emulator?.stop();
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}

/** A retried activity's previous failure in a few words: the timeout's type, else the failure's message. */
function retryCause(failure: temporal.api.failure.v1.IFailure | null | undefined): string {
  const timeout = failure?.timeoutFailureInfo?.timeoutType ?? failure?.cause?.timeoutFailureInfo?.timeoutType;
  if (timeout)
    return `${temporal.api.enums.v1.TimeoutType[timeout].replace('TIMEOUT_TYPE_', '').toLowerCase()} timeout`;
  return (failure?.message ?? 'unknown').slice(0, 60);
}

const sumOf = (xs: Record<string, number>) => Object.values(xs).reduce((a, b) => a + b, 0);
