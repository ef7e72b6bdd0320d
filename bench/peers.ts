/**
 * `npm run bench -- peers`: durable-react's turn beside the leanest Temporal agent — a minimal
 * ReAct loop on `@temporalio/ai-sdk` (bench/peers/peer-workflow.ts) — in one invocation, on one
 * dev server, each worker its own process. For 3 and 12 decision rounds per turn, N conversations
 * (DREACT_BENCH_PEERS_SIZE, default 100) started at once with a zero-latency model: durable-react's
 * first turn and the same conversations' next turn, then the peer's N loops. Reported per system:
 * rounds/s; CPU ms per round by component (the worker process, the dev server process, the
 * Postgres backends serving the worker — from /proc); per turn: history events, workflow tasks
 * (over every execution a turn has: the conversation's share, the turn, its persist child) and
 * the server's state writes (persistence requests that write a workflow's state, from the
 * server's Prometheus counters); per extra round (the slope from 3 to 12) and outside the rounds
 * (the turn's count minus rounds × slope); and the ratios to the peer. Runs are sequential so each
 * one's server CPU is its own. Loopback only, bounded; everything stops at the end.
 */
import { uptime, loadavg } from 'node:os';
import { join } from 'node:path';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { DreactClient } from '../client/api';
import { openDb, migrate, dropSchema, type Db } from '../store/db';
import { conversationWorkflowId } from '../core/turn/ids';
import { noteScript } from '../activities/model/adapters/note-script';
import {
  addCounts,
  countEvents,
  historyEvents,
  historyShares,
  NO_COUNTS,
  type HistoryCounts,
} from '../test/support/history-counts';
import { cpuSeconds, pidByCommandLine, spawnWorkerProcess, type WorkerProcess } from './worker-process';
import { backendCpuReader, likeLiteral, withApplicationName } from './postgres-backends';
import {
  freePort,
  persistenceDelta,
  serverMetrics,
  stateWrites,
  STATE_WRITE_OPERATIONS,
  type ServerMetrics,
} from './peers/server-metrics';
import type { Client } from '@temporalio/client';
import type { LoadServer } from './load-server';

const SIZE = Number(process.env.DREACT_BENCH_PEERS_SIZE ?? 100);
const ROUND_COUNTS = (process.env.DREACT_BENCH_PEERS_ROUNDS ?? '3,12').split(',').map(Number);

/**
 * durable-react's worker variants measured beside each other (DREACT_BENCH_PEERS_VARIANTS):
 * `label:NAME=value,NAME=value;label2:…` — each its own worker process with those environment
 * variables; `script=inline` puts the whole script in the turn (the shape before issue 42);
 * `worker=PATH` runs another compiled worker (e.g. a build of main in another tree: `PATH` its
 * dist/worker.cjs), so two builds compare in one invocation. Default: the deployed worker as it is.
 */
export interface Variant {
  label: string;
  env: Record<string, string>;
  inlineScript: boolean;
  /** Another tree's compiled worker (dist/worker.cjs) instead of this tree's. */
  worker?: string;
}

export function parseVariants(raw: string | undefined): Variant[] {
  if (!raw?.trim()) return [{ label: 'durable-react', env: {}, inlineScript: false }];
  return raw.split(';').map((spec) => {
    const at = spec.indexOf(':');
    const label = (at === -1 ? spec : spec.slice(0, at)).trim();
    const env: Record<string, string> = {};
    let inlineScript = false;
    let worker: string | undefined;
    for (const kv of at === -1 ? [] : spec.slice(at + 1).split(',')) {
      const [k, v] = kv.split('=').map((x) => x.trim());
      if (!k || v === undefined) throw new Error(`DREACT_BENCH_PEERS_VARIANTS: "${kv}" in "${spec}" is not NAME=value`);
      if (k === 'script') {
        if (v !== 'inline' && v !== 'named')
          throw new Error(`DREACT_BENCH_PEERS_VARIANTS: script=${v}: inline or named`);
        inlineScript = v === 'inline';
      } else if (k === 'worker') worker = v;
      else env[k] = v;
    }
    if (!label) throw new Error(`DREACT_BENCH_PEERS_VARIANTS: "${spec}" has no label`);
    return { label: `durable-react ${label}`, env, inlineScript, ...(worker ? { worker } : {}) };
  });
}

/** What one run cost: N turns of `rounds` rounds. */
export interface PeerRun {
  system: string;
  turns: number;
  rounds: number;
  wallMs: number;
  cpu: { worker: number; server: number; postgres: number };
  counts: HistoryCounts;
  persistence: Map<string, number>;
  load: string;
}

interface Side {
  name: string;
  worker: WorkerProcess;
  /** CPU of the Postgres backends this side's worker uses (none for the peer). */
  postgres?: (db: Db) => ReturnType<typeof backendCpuReader>;
  /** Starts `n` turns of `rounds` rounds tagged `tag`, awaits them; returns how to count their histories. */
  run(n: number, rounds: number, tag: string): Promise<() => Promise<HistoryCounts>>;
}

const loadLine = () =>
  `load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (up ${Math.round(uptime() / 60)} min)`;

async function measure(
  side: Side,
  serverPid: number,
  metrics: ServerMetrics,
  db: Db,
  n: number,
  rounds: number,
  tag: string,
): Promise<PeerRun> {
  const load = loadLine();
  const workerPid = side.worker.child.pid!;
  const backends = side.postgres ? await side.postgres(db) : undefined;
  let sampling = true;
  const sampler = (async () => {
    while (sampling && backends) {
      await backends.sample();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const w0 = cpuSeconds(workerPid);
  const s0 = cpuSeconds(serverPid);
  const p0 = await metrics.persistence();
  const t0 = Date.now();
  let count: () => Promise<HistoryCounts>;
  let wallMs: number;
  try {
    // A worker that dies mid-run fails the bench with its own words.
    const died = side.worker.exited.then((how) => {
      throw new Error(`the ${side.name} worker exited (${String(how)}):\n${side.worker.log().slice(-3000)}`);
    });
    count = await Promise.race([side.run(n, rounds, tag), died]);
    wallMs = Date.now() - t0;
    // The conversation's bookkeeping of the turn's end (its workflow task after the child closed) lands just after.
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    sampling = false;
    await sampler;
  }
  await backends?.sample();
  const cpu = {
    worker: cpuSeconds(workerPid) - w0,
    server: cpuSeconds(serverPid) - s0,
    postgres: backends?.cpuSeconds() ?? 0,
  };
  const persistence = persistenceDelta(p0, await metrics.persistence());
  const run: PeerRun = { system: side.name, turns: n, rounds, wallMs, cpu, counts: await count(), persistence, load };
  // Each run's figures as soon as it ends (a long invocation on a busy machine keeps what it measured).
  if (n >= 10) console.error(`[peers] ${side.name} ${n}×${rounds} (${tag}): ${JSON.stringify(runFigures('', run))}`);
  return run;
}

/** durable-react: the deployed worker process (workers/main.ts, compiled), the scripted model at zero latency. */
async function dreactSide(client: Client, address: string, db: Db, variant: Variant, index: number): Promise<Side> {
  const { env, inlineScript, worker: entry } = variant;
  const taskQueue = `bench-peers-${process.pid}-${index}`;
  const applicationName = `dreact-bench-peers-${process.pid}-${index}`;
  const worker = spawnWorkerProcess(
    {
      TEMPORAL_ADDRESS: address,
      DREACT_DB_SCHEMA: db.schema,
      DATABASE_URL: withApplicationName(db.databaseUrl, applicationName),
      DREACT_TASK_QUEUE: taskQueue,
      DREACT_MAX_CONCURRENT_ACTIVITIES: process.env.DREACT_MAX_CONCURRENT_ACTIVITIES ?? '400',
      DREACT_DB_POOL_MAX: process.env.DREACT_DB_POOL_MAX ?? '40',
      ...env,
    },
    entry ? { compiled: entry } : {},
  );
  await worker.ready;
  const api = new DreactClient(client, { taskQueue });
  const shares = historyShares(client);
  return {
    name: variant.label,
    worker,
    postgres: (d) => backendCpuReader(d, likeLiteral(applicationName)),
    async run(n, rounds, tag) {
      // The script by name, built on the worker (activities/model/adapters/note-script.ts); `inline`: the
      // script itself in the turn's start and every decide input, as before issue 42.
      const model = {
        provider: 'scripted' as const,
        script: inlineScript ? noteScript(`notes-${rounds}`)! : `notes-${rounds}`,
      };
      const ids = Array.from({ length: n }, (_, i) => `peers_${index}_${tag}_${i}`);
      const started = await Promise.all(
        ids.map((id) => api.startTurn(id, 'write the notes', { maxRounds: rounds + 2, model })),
      );
      const results = await Promise.all(started.map((s, i) => api.result(ids[i]!, s.turnIndex)));
      const wrong = results.filter((r) => r.rounds !== rounds);
      if (wrong.length)
        throw new Error(`${wrong.length} turns did not run ${rounds} rounds (e.g. ${wrong[0]!.rounds})`);
      return async () => {
        let counts = NO_COUNTS;
        for (const [i, s] of started.entries()) {
          counts = addCounts(counts, await shares(conversationWorkflowId(ids[i]!)));
          counts = addCounts(counts, countEvents(await historyEvents(client, s.workflowId)));
          counts = addCounts(counts, countEvents(await historyEvents(client, `${s.workflowId}/persist`)));
        }
        return counts;
      };
    },
  };
}

/** The peer: bench/peers/peer-worker.ts as a process. */
async function peerSide(client: Client, address: string): Promise<Side> {
  const taskQueue = `bench-peers-ai-sdk-${process.pid}`;
  const worker = spawnWorkerProcess(
    { TEMPORAL_ADDRESS: address, DREACT_PEER_TASK_QUEUE: taskQueue },
    { script: join(__dirname, 'peers', 'peer-worker.ts') },
  );
  await worker.ready;
  return {
    name: '@temporalio/ai-sdk',
    worker,
    async run(n, rounds, tag) {
      const ids = Array.from({ length: n }, (_, i) => `peer_${process.pid}_${tag}_${i}`);
      const handles = await Promise.all(
        ids.map((workflowId) => client.workflow.start('PeerReactWorkflow', { taskQueue, workflowId, args: [rounds] })),
      );
      const results = (await Promise.all(handles.map((h) => h.result()))) as Array<{ steps: number }>;
      const wrong = results.filter((r) => r.steps !== rounds);
      if (wrong.length)
        throw new Error(`${wrong.length} peer loops did not run ${rounds} rounds (e.g. ${wrong[0]!.steps})`);
      return async () => {
        let counts = NO_COUNTS;
        for (const id of ids) counts = addCounts(counts, countEvents(await historyEvents(client, id)));
        return counts;
      };
    },
  };
}

const f1 = (x: number) => Number(x.toFixed(1));
const f2 = (x: number) => Number(x.toFixed(2));
const cpuPerRound = (r: PeerRun) => {
  const per = (s: number) => (s * 1000) / (r.turns * r.rounds);
  return {
    worker: per(r.cpu.worker),
    server: per(r.cpu.server),
    postgres: per(r.cpu.postgres),
    sum: per(r.cpu.worker + r.cpu.server + r.cpu.postgres),
  };
};
const perTurn = (r: PeerRun) => ({
  events: r.counts.events / r.turns,
  workflowTasks: r.counts.workflowTasks / r.turns,
  stateWrites: stateWrites(r.persistence) / r.turns,
});

const causes = (c: Record<string, number>) => {
  const parts = Object.entries(c)
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${why} ${n}`);
  return parts.length ? `: ${parts.join(', ')}` : '';
};

/** The figures of one run, prefixed by its label. */
export function runFigures(label: string, r: PeerRun): Record<string, number | string> {
  const c = cpuPerRound(r);
  const t = perTurn(r);
  const ops = [...r.persistence].sort((a, b) => b[1] - a[1]).map(([op, k]) => `${op} ${f1(k / r.turns)}`);
  return {
    [`${label}: rounds/s`]: f1((r.turns * r.rounds) / (r.wallMs / 1000)),
    [`${label}: CPU ms per round worker / server / Postgres / sum`]: [c.worker, c.server, c.postgres, c.sum]
      .map((x) => x.toFixed(1))
      .join(' / '),
    [`${label}: per turn events / workflow tasks / state writes`]: `${f1(t.events)} / ${f1(t.workflowTasks)} / ${f1(t.stateWrites)}`,
    [`${label}: failed or timed-out workflow tasks (of which sticky schedule-to-start)`]: `${r.counts.failedWorkflowTasks} (${r.counts.stickyTimeouts})${causes(r.counts.failureCauses)}`,
    [`${label}: persistence requests per turn (by operation)`]: ops.join(', '),
    [`${label}: machine load at start`]: r.load,
  };
}

/** Per extra round and outside the rounds, from a system's runs at two round counts (its slope). */
export function shapeFigures(label: string, a: PeerRun, b: PeerRun): Record<string, number | string> {
  const ta = perTurn(a);
  const tb = perTurn(b);
  const d = b.rounds - a.rounds;
  const slope = {
    events: (tb.events - ta.events) / d,
    wft: (tb.workflowTasks - ta.workflowTasks) / d,
    writes: (tb.stateWrites - ta.stateWrites) / d,
  };
  return {
    [`${label}: per extra round events / workflow tasks / state writes`]: `${f1(slope.events)} / ${f1(slope.wft)} / ${f1(slope.writes)}`,
    [`${label}: outside the rounds events / workflow tasks / state writes`]: `${f1(ta.events - a.rounds * slope.events)} / ${f1(ta.workflowTasks - a.rounds * slope.wft)} / ${f1(ta.stateWrites - a.rounds * slope.writes)}`,
  };
}

/** Ours against the peer's, from one invocation. */
export function ratioFigures(label: string, ours: PeerRun, peer: PeerRun): Record<string, number | string> {
  const rate = (r: PeerRun) => (r.turns * r.rounds) / (r.wallMs / 1000);
  return {
    [`${label}: CPU per round ours / peer`]: f2(cpuPerRound(ours).sum / cpuPerRound(peer).sum),
    [`${label}: rounds/s ours / peer`]: f2(rate(ours) / rate(peer)),
  };
}

/** The peer on a load bench's dev server: `run(n, tag)` measures n loops of `rounds` rounds (after a warm-up). */
export async function loadPeer(server: LoadServer, db: Db, rounds: number) {
  const side = await peerSide(server.client, server.workerEnv.TEMPORAL_ADDRESS!);
  const metrics = serverMetrics(server.metricsPort!);
  await measure(side, server.pid!, metrics, db, 5, rounds, 'warm');
  return {
    run: (n: number, tag: string) => measure(side, server.pid!, metrics, db, n, rounds, tag),
    async stop() {
      side.worker.child.kill('SIGTERM');
      await side.worker.exited;
    },
  };
}

export async function benchPeers(): Promise<Record<string, number | string>> {
  const metricsPort = await freePort();
  const server = await startTemporalServer({ extraArgs: ['--metrics-port', String(metricsPort)] });
  const port = server.address.split(':').pop()!;
  const serverPid = pidByCommandLine('temporal', 'start-dev', `--port ${port}`);
  if (serverPid === undefined) throw new Error(`no dev server process on port ${port}`);
  const metrics = serverMetrics(metricsPort);
  const db = openDb({ schema: `bench_peers_${process.pid}` });
  await migrate(db);
  const sides: Side[] = [];
  const out: Record<string, number | string> = {
    'peers.conversations': SIZE,
    'peers.state write operations': STATE_WRITE_OPERATIONS.join(' + '),
  };
  try {
    const variants = parseVariants(process.env.DREACT_BENCH_PEERS_VARIANTS);
    const ours: Side[] = [];
    for (const [i, v] of variants.entries()) {
      const side = await dreactSide(server.env.client, server.address, db, v, i);
      sides.push(side);
      ours.push(side);
    }
    const peer = await peerSide(server.env.client, server.address);
    sides.push(peer);
    const runs = new Map<string, PeerRun>();
    for (const rounds of ROUND_COUNTS) {
      // Warm-up (JIT, bundles, pools) of each at this round count, not measured.
      for (const side of [...ours, peer]) await measure(side, serverPid, metrics, db, 5, rounds, `warm${rounds}`);
      const theirs = await measure(peer, serverPid, metrics, db, SIZE, rounds, `r${rounds}`);
      runs.set(`peer${rounds}`, theirs);
      Object.assign(out, runFigures(`ai-sdk ${rounds} rounds`, theirs));
      for (const side of ours) {
        const first = await measure(side, serverPid, metrics, db, SIZE, rounds, `r${rounds}`);
        const later = await measure(side, serverPid, metrics, db, SIZE, rounds, `r${rounds}`);
        runs.set(`${side.name} first${rounds}`, first).set(`${side.name} later${rounds}`, later);
        Object.assign(
          out,
          runFigures(`${side.name} ${rounds} rounds, first turn`, first),
          runFigures(`${side.name} ${rounds} rounds, later turn`, later),
          ratioFigures(`${side.name} ${rounds} rounds, first turn`, first, theirs),
          ratioFigures(`${side.name} ${rounds} rounds, later turn`, later, theirs),
        );
      }
    }
    const [lo, hi] = [Math.min(...ROUND_COUNTS), Math.max(...ROUND_COUNTS)];
    if (lo !== hi) {
      Object.assign(out, shapeFigures('ai-sdk', runs.get(`peer${lo}`)!, runs.get(`peer${hi}`)!));
      for (const side of ours)
        for (const turn of ['first', 'later'])
          Object.assign(
            out,
            shapeFigures(
              `${side.name} ${turn} turn`,
              runs.get(`${side.name} ${turn}${lo}`)!,
              runs.get(`${side.name} ${turn}${hi}`)!,
            ),
          );
    }
    return out;
  } finally {
    for (const side of sides) {
      side.worker.child.kill('SIGTERM');
      await side.worker.exited;
    }
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}
