/**
 * A trial's checks → its verdict; a case's trials → pass@k and pass^k; a run → its summary; two
 * runs → regressions and improvements. Pure.
 *
 * pass@k is the chance that at least one of k trials passes, pass^k that all k pass (τ-bench),
 * both estimated without bias from n ≥ k trials of which c passed: 1 − C(n−c, k)/C(n, k) and
 * C(c, k)/C(n, k).
 */
import type { EvalCase } from './suite';
import { check, describeFailure, type Check, type TrialObservation } from './check';
import { scoreTrajectory } from './trajectory';
import { scoreAnswer } from './answer';
import { scoreFiles, scoreLimits } from './limits';

export interface TrialVerdict {
  pass: boolean;
  passed: number;
  total: number;
  checks: Check[];
}

/** Every check of a case on one trial (a failed turn is itself a failing check). */
export function scoreTrial(c: Pick<EvalCase, 'expect'>, obs: TrialObservation, extra: Check[] = []): TrialVerdict {
  const checks: Check[] = [
    check('turns.completed', obs.failure === undefined, 'every turn completes', obs.failure ?? 'completed'),
    ...(c.expect.tools ? scoreTrajectory(c.expect.tools, obs.calls) : []),
    ...(c.expect.answer ? scoreAnswer(c.expect.answer, obs) : []),
    ...(c.expect.limits ? scoreLimits(c.expect.limits, obs) : []),
    ...(c.expect.files ? scoreFiles(c.expect.files, obs) : []),
    ...extra,
  ];
  const passed = checks.filter((x) => x.pass).length;
  return { pass: passed === checks.length, passed, total: checks.length, checks };
}

/** The readable summary of a trial (Temporal UI's details, the CLI). */
export function trialSummary(caseId: string, trial: number, v: Pick<TrialVerdict, 'pass' | 'passed' | 'total'>) {
  return `case ${caseId} trial ${trial}: ${v.pass ? 'pass' : 'FAIL'} ${v.passed}/${v.total} checks`;
}

export function failureLines(v: Pick<TrialVerdict, 'checks'>): string[] {
  return v.checks.filter((x) => !x.pass).map(describeFailure);
}

function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** pass@k from n trials with c passing (k ≤ n). */
export function passAtK(n: number, c: number, k: number): number {
  if (n === 0 || k < 1 || k > n) return 0;
  return 1 - choose(n - c, k) / choose(n, k);
}

/** pass^k from n trials with c passing (k ≤ n). */
export function passHatK(n: number, c: number, k: number): number {
  if (n === 0 || k < 1 || k > n) return 0;
  return choose(c, k) / choose(n, k);
}

/** The q-quantile (0–1) by nearest rank; 0 for no values. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface TrialRecord {
  caseId: string;
  trial: number;
  pass: boolean;
  passed: number;
  total: number;
  checks: Check[];
  rounds: number;
  tokens: number;
  costUsd: number;
  wallMs: number;
  conversationId: string;
  workflowId: string;
}

export interface CaseSummary {
  caseId: string;
  trials: number;
  passedTrials: number;
  /** pass^k over all trials: every trial passed. */
  pass: boolean;
  passAtK: number;
  passHatK: number;
  costUsd: number;
  tokens: number;
  rounds: number;
  p50Ms: number;
  p95Ms: number;
  /** The failed checks of the failing trials (`trial 2: answer.contains[0]: expected …`). */
  failures: string[];
}

export function summariseCase(caseId: string, trials: readonly TrialRecord[]): CaseSummary {
  const n = trials.length;
  const c = trials.filter((t) => t.pass).length;
  const mean = (f: (t: TrialRecord) => number) => (n ? trials.reduce((s, t) => s + f(t), 0) / n : 0);
  return {
    caseId,
    trials: n,
    passedTrials: c,
    pass: n > 0 && c === n,
    passAtK: passAtK(n, c, n),
    passHatK: passHatK(n, c, n),
    costUsd: mean((t) => t.costUsd),
    tokens: Math.round(mean((t) => t.tokens)),
    rounds: mean((t) => t.rounds),
    p50Ms: percentile(
      trials.map((t) => t.wallMs),
      0.5,
    ),
    p95Ms: percentile(
      trials.map((t) => t.wallMs),
      0.95,
    ),
    failures: [...trials]
      .sort((a, b) => a.trial - b.trial)
      .flatMap((t) => t.checks.filter((x) => !x.pass).map((x) => `trial ${t.trial}: ${describeFailure(x)}`)),
  };
}

export interface RunSummary {
  cases: CaseSummary[];
  passedCases: number;
  totalCases: number;
  trials: number;
  passedTrials: number;
  costUsd: number;
  tokens: number;
  p50Ms: number;
  p95Ms: number;
}

export function summariseRun(trials: readonly TrialRecord[], caseOrder?: readonly string[]): RunSummary {
  const ids = caseOrder ?? [...new Set(trials.map((t) => t.caseId))];
  const cases = ids.map((id) =>
    summariseCase(
      id,
      trials.filter((t) => t.caseId === id),
    ),
  );
  return {
    cases,
    passedCases: cases.filter((c) => c.pass).length,
    totalCases: cases.length,
    trials: trials.length,
    passedTrials: trials.filter((t) => t.pass).length,
    costUsd: trials.reduce((s, t) => s + t.costUsd, 0),
    tokens: trials.reduce((s, t) => s + t.tokens, 0),
    p50Ms: percentile(
      trials.map((t) => t.wallMs),
      0.5,
    ),
    p95Ms: percentile(
      trials.map((t) => t.wallMs),
      0.95,
    ),
  };
}

export interface CaseChange {
  caseId: string;
  kind: 'regression' | 'improvement' | 'new' | 'removed';
  baseline?: number;
  current?: number;
}

/**
 * Regressions and improvements against a baseline run, by each case's share of passing trials: a
 * lower share is a regression, a higher one an improvement; a case only in one run is new/removed.
 */
export function compareRuns(baseline: RunSummary, current: RunSummary): CaseChange[] {
  const share = (c: CaseSummary) => (c.trials ? c.passedTrials / c.trials : 0);
  const before = new Map(baseline.cases.map((c) => [c.caseId, c]));
  const out: CaseChange[] = [];
  for (const c of current.cases) {
    const b = before.get(c.caseId);
    if (!b) {
      out.push({ caseId: c.caseId, kind: 'new', current: share(c) });
      continue;
    }
    if (share(c) < share(b)) out.push({ caseId: c.caseId, kind: 'regression', baseline: share(b), current: share(c) });
    else if (share(c) > share(b))
      out.push({ caseId: c.caseId, kind: 'improvement', baseline: share(b), current: share(c) });
  }
  const now = new Set(current.cases.map((c) => c.caseId));
  for (const b of baseline.cases)
    if (!now.has(b.caseId)) out.push({ caseId: b.caseId, kind: 'removed', baseline: share(b) });
  return out;
}

/** The CLI's exit code: 1 when a case fails or regressed, else 0. */
export function exitCodeOf(run: RunSummary, changes: readonly CaseChange[] = []): 0 | 1 {
  return run.passedCases < run.totalCases || changes.some((c) => c.kind === 'regression') ? 1 : 0;
}
