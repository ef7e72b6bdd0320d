/**
 * The chaos suite (`npm run chaos`; a short form runs in `npm test`): many turns on a real
 * Temporal dev server (on a database file, so it can restart) and a Postgres cluster of its own,
 * one worker process, and the Anthropic API emulator through the real SDK, while the harness
 *
 * - kills the worker with SIGKILL inside two narrow windows (activities/chaos.ts: after a round's
 *   append, and after a stream ended but before its final ledger write) and at random moments,
 *   restarting it each time;
 * - restarts the Temporal server once and Postgres once;
 * - has the emulator answer some calls with 429 (retry-after 0 or a past date), 529, 500, or a
 *   stream cut mid-way.
 *
 * Then it checks: every turn completed with its answer; no duplicate blocks (one prompt, one
 * answer per turn, one call and one result per tool call id); every tool effect exactly once (each
 * note written once with its content); one usage-ledger row per decision call the emulator
 * answered, matched by its request id (calls that did not finish are marked `cut`; ledger-audit.ts);
 * and the time from each kill to the next completed activity. Bounded in time; loopback only;
 * everything it started is stopped at the end.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { openDb, migrate } from '../../store/db';
import { usageRows } from '../../store/usage-store';
import { DreactClient } from '../../client/api';
import { startStormTemporal, type StormServer } from './storm-temporal';
import { reply, startAnthropicEmulator, type RecordedRequest } from '../emulator/anthropic-emulator';
import { prng } from '../emulator/sse';
import { auditNoteTurns, isDecisionRequest, noteReply, NOTES_ANSWER } from '../support/note-turns';
import { spawnWorkerProcess, type WorkerProcess } from '../../bench/worker-process';
import { WORKER_LOST } from '../../workers/orphaned-activities';
import { startPostgresCluster } from './postgres-cluster';
import { auditLedger, type StormEvent } from './ledger-audit';
import type { ChaosPoint } from '../../activities/chaos';

export interface ChaosOptions {
  turns: number;
  randomKills: number;
  /** Fraction of model calls answered with a fault (429/529/500/cut stream). */
  faultRate: number;
  seed: number;
  /** Give up (and report) after this long. */
  deadlineMs: number;
  /** The Temporal server the storm runs on (default the dev server; test/chaos/storm-temporal.ts). */
  server?: StormServer;
  log?: (line: string) => void;
}

export const SHORT: ChaosOptions = { turns: 6, randomKills: 3, faultRate: 0.25, seed: 7, deadlineMs: 240_000 };
export const FULL: ChaosOptions = { turns: 20, randomKills: 10, faultRate: 0.25, seed: 11, deadlineMs: 600_000 };

const ROUNDS = 3;
const AIMED: ChaosPoint[] = ['after-round-append', 'before-final-ledger'];

export interface ChaosReport {
  turns: number;
  completed: number;
  kills: number;
  aimedKills: number;
  temporalRestarts: number;
  postgresRestarts: number;
  faults: Record<string, number>;
  recoveryMs: number[];
  /** Per kill: its recovery, when the restarted worker polled, and which activity completed next. */
  recoveryDetail: string[];
  /**
   * Activity attempts retried, by what ended the attempt before: failed by the restarted worker
   * (WorkerLost), a heartbeat or other timeout, or any other failure (injected model faults).
   */
  retriesAfter: { workerLost: number; timeout: number; other: number };
  /**
   * What the restarted workers did with the dead workers' journals (workers/orphaned-activities.ts,
   * from their logs): activities they failed themselves (the retry then waits for the first poller),
   * and those the server had already timed out by the time they looked (a slow start).
   */
  releasedAtRestart: { released: number; settled: number };
  duplicateBlocks: number;
  duplicateEffects: number;
  missingEffects: number;
  answeredCalls: number;
  ledgerRows: number;
  cutCalls: number;
  cutRows: number;
  /** Kills that could not wait for young streams to settle. */
  unsafeKills: number;
  /** Answered calls open at a kill before their usage was sent or within 2 s after (ledger-audit.ts). */
  atRisk: number;
  /** Answered calls without a ledger row (each must be at risk). */
  missingRows: number;
  /** Those calls, each with its times against the kills and restarts. */
  missingAtRisk: string[];
  problems: string[];
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const evTime = (e: temporal.api.history.v1.IHistoryEvent) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => undefined);
  const rand = prng(opts.seed);
  const home = mkdtempSync(join(tmpdir(), 'dreact-chaos-'));
  const markers = join(home, 'markers');
  mkdirSync(markers);
  const pg = startPostgresCluster(await freePort());
  const server = await startStormTemporal(opts.server ?? 'dev', {
    home,
    port: await freePort(),
    postgresUrl: pg.url,
    log,
  });
  const db = openDb({ databaseUrl: pg.url, schema: 'chaos', max: 4 });
  await migrate(db);

  // The model: a fault for some calls, else the next note (the title call always answers).
  const faults = { '429 retry-after 0': 0, '429 past date': 0, '529': 0, '500': 0, cut: 0 };
  const emulator = await startAnthropicEmulator({ pace: { firstTokenMs: 150, tokensPerSecond: 300 } });
  emulator.respond((req) => {
    const ok = noteReply(req.body, ROUNDS);
    if (!isDecisionRequest(req.body) || rand() >= opts.faultRate) return ok;
    const kind = Math.floor(rand() * 5);
    if (kind === 0) return (faults['429 retry-after 0']++, reply.rateLimited(0));
    if (kind === 1)
      return (
        faults['429 past date']++,
        reply.error(429, 'rate_limit_error', 'slow down', {
          'retry-after': new Date(Date.now() - 60_000).toUTCString(),
        })
      );
    if (kind === 2) return (faults['529']++, reply.overloaded());
    if (kind === 3) return (faults['500']++, reply.serverError());
    faults.cut++;
    return { ...ok, cutAfterEvents: 4 };
  });

  const taskQueue = 'chaos';
  const workerEnv = (pauseAt?: ChaosPoint): Record<string, string> => ({
    ...server.workerEnv,
    DATABASE_URL: pg.url,
    DREACT_DB_SCHEMA: 'chaos',
    DREACT_TASK_QUEUE: taskQueue,
    ANTHROPIC_API_KEY: 'chaos',
    ANTHROPIC_BASE_URL: emulator.baseURL,
    DREACT_LOG_LEVEL: 'ERROR',
    // Each worker's activity journal, read by the next one after a kill (workers/activity-journal.ts).
    DREACT_WORKER_STATE_DIR: join(home, 'worker-state'),
    ...(pauseAt ? { DREACT_CHAOS_PAUSE_AT: pauseAt, DREACT_CHAOS_MARKER_DIR: markers } : {}),
  });
  let worker: WorkerProcess = spawnWorkerProcess(workerEnv(AIMED[0]));
  await worker.ready;
  const temporalClient = server.client;
  const api = new DreactClient(temporalClient, { taskQueue });

  const kills: number[] = [];
  /** The workers started after a kill (their logs say what they released). */
  const successors: WorkerProcess[] = [];
  /** Kill → the restarted worker polling, per kill. */
  const readyAfterKill: number[] = [];
  /** Kills and restarts, for naming what happened near a call the ledger audit flags. */
  const stormEvents: StormEvent[] = [];
  const stormStart = Date.now();
  let aimedKills = 0;
  let unsafeKills = 0;
  const kill = async (next?: ChaosPoint) => {
    const at = Date.now();
    worker.child.kill('SIGKILL');
    await worker.exited;
    kills.push(at);
    stormEvents.push({ what: 'kill', at });
    worker = spawnWorkerProcess(workerEnv(next));
    successors.push(worker);
    await worker.ready;
    readyAfterKill.push(Date.now() - at);
  };
  /**
   * Open streams whose usage is not sent yet or was sent in the last 150 ms: a kill now could land
   * before the worker recorded the call's row.
   */
  const youngStreams = () =>
    emulator.requests.filter(
      (r) => r.answeredAt !== undefined && r.closedAt === undefined && (r.usageSentAt ?? Infinity) > Date.now() - 150,
    ).length;
  /**
   * Waits (up to 2 s) until no stream is young: a kill then never lands between the provider
   * answering a call and the worker recording it (a window no code can close). A kill that had to
   * go anyway is counted.
   */
  const settleStreams = async () => {
    const until = Date.now() + 2_000;
    while (youngStreams() > 0 && Date.now() < until) await sleep(10);
    if (youngStreams() > 0) unsafeKills++;
  };

  const started: Array<{ conv: string; turnIndex: number; workflowId: string }> = [];
  const startTurn = async (i: number) => {
    const conv = `chaos_${opts.seed}_${i}`;
    const s = await api.startTurn(conv, `write ${ROUNDS - 1} notes`, {
      maxRounds: ROUNDS + 3,
      model: { provider: 'anthropic' },
    });
    started.push({ conv, turnIndex: s.turnIndex, workflowId: s.workflowId });
  };
  const deadline = Date.now() + opts.deadlineMs;
  let temporalRestarts = 0;
  let postgresRestarts = 0;
  try {
    // Turns start over the whole storm so some are always in flight.
    const starter = (async () => {
      for (let i = 0; i < opts.turns; i++) {
        await startTurn(i);
        await sleep(400 + rand() * 600);
      }
    })();
    const results = (async () => {
      await starter;
      // A failed turn is a finding of the storm, reported with its cause chain, not a crash of the harness.
      return Promise.all(
        started.map((s) =>
          api.result(s.conv, s.turnIndex).catch((err: unknown) => ({ answer: undefined, failure: causeChain(err) })),
        ),
      );
    })();

    // Aimed kills: wait for the worker to stop in the window, then kill it there.
    for (const [k, point] of AIMED.entries()) {
      while (!existsSync(join(markers, point))) {
        if (Date.now() > deadline) throw new Error(`the worker never reached ${point}`);
        await sleep(25);
      }
      await settleStreams(); // the paused activity stays paused meanwhile
      log(`kill -9 at ${point}`);
      await kill(AIMED[k + 1]);
      aimedKills++;
    }
    for (let k = 0; k < opts.randomKills; k++) {
      await sleep(500 + rand() * 1500);
      await settleStreams();
      log(`kill -9 (random ${k + 1}/${opts.randomKills})`);
      await kill();
      if (k === Math.floor(opts.randomKills / 3)) {
        log(server.restartLabel);
        stormEvents.push({ what: 'Temporal stop', at: Date.now() });
        await server.restart();
        stormEvents.push({ what: 'Temporal up', at: Date.now() });
        temporalRestarts++;
      }
      if (k === Math.floor((2 * opts.randomKills) / 3)) {
        log('restart Postgres');
        stormEvents.push({ what: 'Postgres restart', at: Date.now() });
        pg.restart();
        postgresRestarts++;
      }
    }
    // The deadline's timer is cleared once the turns are in: left pending, it kept the test process
    // alive to the full deadline (the short storm's file took 244 s for a 25 s test).
    let overdue: NodeJS.Timeout | undefined;
    const outcomes = await Promise.race([
      results,
      new Promise<never>((_, reject) => {
        overdue = setTimeout(
          () => reject(new Error(`turns still running after ${opts.deadlineMs} ms`)),
          Math.max(0, deadline - Date.now()),
        );
      }),
    ]).finally(() => clearTimeout(overdue));

    // Checks.
    const problems: string[] = [];
    const completed = outcomes.filter((o) => o.answer === NOTES_ANSWER).length;
    for (const [i, o] of outcomes.entries()) {
      if ('failure' in o) problems.push(`turn ${started[i]!.conv} failed: ${o.failure}`);
      else if (o.answer !== NOTES_ANSWER)
        problems.push(`turn ${started[i]!.conv} answered ${JSON.stringify(o.answer)}`);
    }
    const audit = await auditNoteTurns(
      db.pool,
      started.map((s) => s.conv),
      ROUNDS,
    );
    const { duplicateBlocks, duplicateEffects, missingEffects } = audit;
    // The ledger: one row per decision call the emulator answered, matched by request id.
    const answered = emulator.requests.filter(
      (r: RecordedRequest) => isDecisionRequest(r.body) && r.status === 200 && r.answeredAt !== undefined,
    );
    const rows = (await usageRows(db.pool)).filter((r) => r.purpose === 'decision');
    const ledger = auditLedger(answered, rows, kills, stormEvents, stormStart);
    problems.push(...ledger.problems);

    // Recovery: from each kill to the next completed activity of any turn.
    const completions: Array<{ at: number; what: string }> = [];
    const retriesAfter = { workerLost: 0, timeout: 0, other: 0 };
    for (const s of started) {
      const history = await temporalClient.workflow.getHandle(s.workflowId).fetchHistory();
      const byId = new Map((history.events ?? []).map((e) => [Number(e.eventId), e]));
      for (const e of history.events ?? []) {
        const retry = e.activityTaskStartedEventAttributes;
        if ((retry?.attempt ?? 1) > 1) {
          const last = retry?.lastFailure;
          if (last?.applicationFailureInfo?.type === WORKER_LOST) retriesAfter.workerLost++;
          else if (last?.timeoutFailureInfo ?? last?.cause?.timeoutFailureInfo) retriesAfter.timeout++;
          else retriesAfter.other++;
        }
        const done = e.activityTaskCompletedEventAttributes;
        if (!done) continue;
        const type = byId.get(Number(done.scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name;
        const attempt = byId.get(Number(done.startedEventId))?.activityTaskStartedEventAttributes?.attempt ?? 1;
        completions.push({ at: evTime(e), what: `${type ?? '?'} attempt ${attempt}` });
      }
    }
    completions.sort((a, b) => a.at - b.at);
    const recoveries = kills.flatMap((t, i) => {
      const next = completions.find((c) => c.at > t);
      return next
        ? [{ ms: next.at - t, detail: `worker polling after ${readyAfterKill[i]} ms; next: ${next.what}` }]
        : [];
    });
    const recoveryMs = recoveries.map((r) => r.ms);
    problems.push(...audit.problems);
    return {
      turns: opts.turns,
      completed,
      kills: kills.length,
      aimedKills,
      temporalRestarts,
      postgresRestarts,
      faults,
      recoveryMs,
      recoveryDetail: recoveries.map((r) => `${r.ms} ms: ${r.detail}`),
      retriesAfter,
      releasedAtRestart: releasedBy(successors.map((w) => w.log())),
      duplicateBlocks,
      duplicateEffects,
      missingEffects,
      answeredCalls: ledger.answered,
      ledgerRows: ledger.rows,
      cutCalls: ledger.cutCalls,
      cutRows: ledger.cutRows,
      unsafeKills,
      atRisk: ledger.atRisk,
      missingRows: ledger.missing,
      missingAtRisk: ledger.missingAtRisk,
      problems,
    };
  } finally {
    worker.child.kill('SIGKILL');
    await worker.exited;
    await db.close();
    await emulator.stop();
    await server.stop();
    pg.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/** "WorkflowFailedError: … ← ActivityFailure: … ← ApplicationFailure: …" down the `cause` chain. */
function causeChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 6; e = e.cause) parts.push(`${e.name}: ${e.message}`);
  return parts.join(' ← ') || String(err);
}

/** Sums the restarted workers' "[worker] released R activities … (S already settled; …" log lines. */
export function releasedBy(logs: string[]): { released: number; settled: number } {
  const out = { released: 0, settled: 0 };
  for (const log of logs)
    for (const m of log.matchAll(
      /\[worker\] released (\d+) activities a dead worker left running \((\d+) already settled/g,
    )) {
      out.released += Number(m[1]);
      out.settled += Number(m[2]);
    }
  return out;
}
