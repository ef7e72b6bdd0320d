/**
 * Eval runs, trials and cassettes (migrations/1764600000100_evals.ts). Every write is idempotent:
 * a run or trial opened twice (a retried activity, a resumed run) is one row, and a trial's result
 * is written by its key, so a trial counts once however often it was scored.
 */
import type { Queryable } from './db';
import type { RunSummary, TrialRecord } from '../core/evals/aggregate';
import type { Check } from '../core/evals/check';

export type EvalMode = 'live' | 'record' | 'replay';

export interface EvalRunRow {
  id: string;
  suite: string;
  mode: EvalMode;
  workflowId: string;
  options: Record<string, unknown>;
  status: 'running' | 'completed';
  summary: RunSummary | null;
  startedAt: string;
  finishedAt: string | null;
}

export async function openEvalRun(
  db: Queryable,
  run: { id: string; suite: string; mode: EvalMode; workflowId: string; options: Record<string, unknown> },
): Promise<void> {
  await db.query(
    `INSERT INTO eval_runs (id, suite, mode, workflow_id, options) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [run.id, run.suite, run.mode, run.workflowId, JSON.stringify(run.options)],
  );
}

export async function finishEvalRun(db: Queryable, id: string, summary: RunSummary): Promise<void> {
  await db.query(
    `UPDATE eval_runs SET status = 'completed', summary = $2, finished_at = COALESCE(finished_at, now()) WHERE id = $1`,
    [id, JSON.stringify(summary)],
  );
}

const toRun = (r: Record<string, unknown>): EvalRunRow => ({
  id: r.id as string,
  suite: r.suite as string,
  mode: r.mode as EvalMode,
  workflowId: r.workflow_id as string,
  options: r.options as Record<string, unknown>,
  status: r.status as EvalRunRow['status'],
  summary: (r.summary as RunSummary | null) ?? null,
  startedAt: (r.started_at as Date).toISOString(),
  finishedAt: r.finished_at ? (r.finished_at as Date).toISOString() : null,
});

export async function getEvalRun(db: Queryable, id: string): Promise<EvalRunRow | undefined> {
  const res = await db.query(`SELECT * FROM eval_runs WHERE id = $1`, [id]);
  return res.rows[0] ? toRun(res.rows[0]) : undefined;
}

/** The latest runs, newest first (optionally of one suite). */
export async function listEvalRuns(
  db: Queryable,
  opts: { suite?: string; limit?: number } = {},
): Promise<EvalRunRow[]> {
  const res = await db.query(
    `SELECT * FROM eval_runs WHERE ($1::text IS NULL OR suite = $1) ORDER BY started_at DESC, id LIMIT $2`,
    [opts.suite ?? null, opts.limit ?? 50],
  );
  return res.rows.map(toRun);
}

export async function openEvalTrial(
  db: Queryable,
  t: { runId: string; caseId: string; trial: number; conversationId: string; workflowId: string },
): Promise<void> {
  await db.query(
    `INSERT INTO eval_trials (run_id, case_id, trial, conversation_id, workflow_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (run_id, case_id, trial) DO NOTHING`,
    [t.runId, t.caseId, t.trial, t.conversationId, t.workflowId],
  );
}

/** Stores a trial's verdict and figures (the latest scoring wins; the trial stays one row). */
export async function saveEvalTrial(db: Queryable, runId: string, t: TrialRecord): Promise<void> {
  await db.query(
    `UPDATE eval_trials SET status = 'scored', pass = $4, passed = $5, total = $6, checks = $7, rounds = $8, tokens = $9,
            cost_usd = $10, wall_ms = $11, scored_at = now()
      WHERE run_id = $1 AND case_id = $2 AND trial = $3`,
    [
      runId,
      t.caseId,
      t.trial,
      t.pass,
      t.passed,
      t.total,
      JSON.stringify(t.checks),
      t.rounds,
      t.tokens,
      t.costUsd,
      Math.round(t.wallMs),
    ],
  );
}

/** A run's scored trials, by case and trial. */
export async function evalTrials(db: Queryable, runId: string): Promise<TrialRecord[]> {
  const res = await db.query(
    `SELECT * FROM eval_trials WHERE run_id = $1 AND status = 'scored' ORDER BY case_id, trial`,
    [runId],
  );
  return res.rows.map((r) => ({
    caseId: r.case_id,
    trial: r.trial,
    pass: r.pass,
    passed: r.passed,
    total: r.total,
    checks: r.checks as Check[],
    rounds: r.rounds,
    tokens: r.tokens,
    costUsd: r.cost_usd,
    wallMs: r.wall_ms,
    conversationId: r.conversation_id,
    workflowId: r.workflow_id,
  }));
}

/** How many trial rows a run has (scored or not): a resumed run must not add any. */
export async function countEvalTrials(db: Queryable, runId: string): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM eval_trials WHERE run_id = $1`, [runId]);
  return res.rows[0]!.n;
}

export interface TrialOfConversation {
  runId: string;
  suite: string;
  caseId: string;
  trial: number;
  mode: EvalMode;
}

/** The eval trial a conversation plays, if any (the cassette provider's lookup). */
export async function trialOfConversation(
  db: Queryable,
  conversationId: string,
): Promise<TrialOfConversation | undefined> {
  const res = await db.query(
    `SELECT t.run_id, r.suite, t.case_id, t.trial, r.mode FROM eval_trials t JOIN eval_runs r ON r.id = t.run_id
      WHERE t.conversation_id = $1`,
    [conversationId],
  );
  const r = res.rows[0];
  return r && { runId: r.run_id, suite: r.suite, caseId: r.case_id, trial: r.trial, mode: r.mode };
}

export interface CassetteEntry {
  key: string;
  requestHash: string;
  parts: unknown[];
}

export async function putCassetteEntry(db: Queryable, cassette: string, e: CassetteEntry): Promise<void> {
  await db.query(
    `INSERT INTO eval_cassette_entries (cassette, key, request_hash, parts) VALUES ($1, $2, $3, $4)
     ON CONFLICT (cassette, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, parts = EXCLUDED.parts, recorded_at = now()`,
    [cassette, e.key, e.requestHash, JSON.stringify(e.parts)],
  );
}

export async function getCassetteEntry(
  db: Queryable,
  cassette: string,
  key: string,
): Promise<CassetteEntry | undefined> {
  const res = await db.query(
    `SELECT key, request_hash, parts FROM eval_cassette_entries WHERE cassette = $1 AND key = $2`,
    [cassette, key],
  );
  const r = res.rows[0];
  return r && { key: r.key, requestHash: r.request_hash, parts: r.parts };
}

/** Loads a cassette file's entries (replay) in one statement. */
export async function loadCassette(db: Queryable, cassette: string, entries: readonly CassetteEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    `INSERT INTO eval_cassette_entries (cassette, key, request_hash, parts)
     SELECT $1, e.key, e.request_hash, e.parts FROM jsonb_to_recordset($2::jsonb) AS e(key text, request_hash text, parts jsonb)
     ON CONFLICT (cassette, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, parts = EXCLUDED.parts`,
    [cassette, JSON.stringify(entries.map((e) => ({ key: e.key, request_hash: e.requestHash, parts: e.parts })))],
  );
}

export async function cassetteEntries(db: Queryable, cassette: string): Promise<CassetteEntry[]> {
  const res = await db.query(
    `SELECT key, request_hash, parts FROM eval_cassette_entries WHERE cassette = $1 ORDER BY key`,
    [cassette],
  );
  return res.rows.map((r) => ({ key: r.key, requestHash: r.request_hash, parts: r.parts }));
}

/** Each scored trial's wall time (opened → scored) and its turns' (started → finished), in ms. */
export async function evalTrialTimings(
  db: Queryable,
  runId: string,
): Promise<Array<{ trialMs: number; turnsMs: number }>> {
  const res = await db.query<{ trial_ms: number; turns_ms: number }>(
    `SELECT extract(epoch FROM (t.scored_at - t.started_at)) * 1000 AS trial_ms,
            (SELECT sum(extract(epoch FROM (u.finished_at - u.started_at)) * 1000) FROM turns u
              WHERE u.conversation_id = t.conversation_id) AS turns_ms
       FROM eval_trials t WHERE t.run_id = $1 AND t.status = 'scored'`,
    [runId],
  );
  return res.rows.map((r) => ({ trialMs: Number(r.trial_ms), turnsMs: Number(r.turns_ms ?? 0) }));
}

/** A turn's workspace files created before `before` (ANNOUNCE's files as a past round saw them). */
export async function turnFilesBefore(
  db: Queryable,
  conversationId: string,
  turnId: string,
  before: string,
): Promise<Array<{ key: string; sizeBytes: number; checkedOutFrom?: string }>> {
  const res = await db.query<{ key: string; size_bytes: number; from: unknown }>(
    `SELECT key, size_bytes, payload->'checked_out_from' AS from FROM artifacts
      WHERE conversation_id = $1 AND kind = 'file' AND starts_with(key, $2) AND created_at < $3
      ORDER BY created_at, key`,
    [conversationId, `${turnId}/`, before],
  );
  return res.rows.map((r) => ({
    key: r.key,
    sizeBytes: Number(r.size_bytes),
    ...(typeof r.from === 'string' ? { checkedOutFrom: r.from } : {}),
  }));
}
