/**
 * `dreact eval <suite>`: runs an eval suite (evals/<suite>.yaml, or a path) as an EvalRunWorkflow
 * and reports it — a terminal table, `--json`, `--html FILE` — optionally against a baseline run
 * (`--compare <run id>`). The exit code is 1 when a case fails or regressed (a CI gate).
 * `--record` runs against the live provider and writes the cassette (evals/cassettes/<suite>.json);
 * `--replay` answers every model call from it, offline. `dreact eval runs` lists the stored runs.
 *
 * `runEval` is the command without the printing, for tests and other callers.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { parseSuite, trialsOf, type EvalSuite } from '../../core/evals/suite';
import { compareRuns, exitCodeOf } from '../../core/evals/aggregate';
import { CassetteFileSchema, type CassetteFile } from '../../core/evals/cassette';
import { renderHtml, renderTable, type EvalReport, type ReportLinks } from '../../core/evals/report';
import type { ModelConfig } from '../../core/model/config';
import { TASK_QUEUE } from '../../core/turn/ids';
import { formatZodError } from '../../core/validation';
import {
  cassetteEntries,
  evalTrials,
  getEvalRun,
  listEvalRuns,
  loadCassette,
  type EvalMode,
} from '../../store/eval-store';
import type { EvalRunInput, EvalRunResult } from '../../workflows/eval-run';
import { evalRunWorkflowId } from '../../workflows/eval-run';
import { DreactError } from '../../client/errors';
import { withSession } from './with-session';
import { workflowUrl } from './workflow-url';
import { serveFixtures, withFixtures } from './eval-fixtures';

export interface RunEvalOptions {
  /** A suite name (evals/<name>.yaml) or a file path. */
  suite: string;
  agent?: string;
  provider?: 'scripted' | 'anthropic' | 'openai';
  model?: string;
  trials?: number;
  concurrency?: number;
  compare?: string;
  mode?: EvalMode;
  /** The cassette file (default evals/cassettes/<suite>.json beside the suite's folder). */
  cassette?: string;
  /** Only these cases. */
  cases?: string[];
  /** The run id (default a new one). */
  runId?: string;
}

export interface EvalTarget {
  temporal: Client;
  pool: Pool;
  taskQueue?: string;
}

/** A suite by name or path: its file and its name (the file's base name). */
export function resolveSuite(suite: string, cwd = process.cwd()): { file: string; name: string } {
  const candidates = /[/\\]|\.ya?ml$|\.json$/.test(suite)
    ? [resolve(cwd, suite)]
    : ['yaml', 'yml', 'json'].map((ext) => resolve(cwd, 'evals', `${suite}.${ext}`));
  const file = candidates.find((f) => existsSync(f));
  if (!file) throw new DreactError(`no eval suite ${suite} (looked for ${candidates.join(', ')})`, 'bad_input');
  return { file, name: basename(file, extname(file)) };
}

export const defaultCassette = (suiteFile: string, name: string) =>
  join(dirname(suiteFile), 'cassettes', `${name}.json`);

function readCassette(file: string): CassetteFile {
  if (!existsSync(file))
    throw new DreactError(`no cassette ${file}: record the suite first (dreact eval <suite> --record)`, 'bad_input');
  const parsed = CassetteFileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new DreactError(`${file}: ${formatZodError(parsed.error)}`, 'bad_input');
  return parsed.data;
}

export async function runEval(
  target: EvalTarget,
  o: RunEvalOptions,
): Promise<{ report: EvalReport; result: EvalRunResult; cassetteFile?: string }> {
  const { file, name } = resolveSuite(o.suite);
  let suite: EvalSuite;
  try {
    suite = parseSuite(readFileSync(file, 'utf8'), file);
  } catch (err) {
    throw new DreactError((err as Error).message, 'bad_input');
  }
  const chosen = o.cases?.length ? suite.cases.filter((c) => o.cases!.includes(c.id)) : suite.cases;
  if (chosen.length === 0)
    throw new DreactError(`suite ${name} has none of the cases ${o.cases?.join(', ')}`, 'bad_input');
  // The suite's fixture pages, served by this run (eval-fixtures.ts) until its workflow ends.
  const fixtures = suite.fixtures ? await serveFixtures(name, suite.fixtures) : undefined;
  try {
    return await runSuite(target, o, {
      file,
      name,
      suite,
      cases: fixtures ? withFixtures(chosen, fixtures.origin) : chosen,
    });
  } finally {
    await fixtures?.close();
  }
}

async function runSuite(
  target: EvalTarget,
  o: RunEvalOptions,
  { file, name, suite, cases }: { file: string; name: string; suite: EvalSuite; cases: EvalSuite['cases'] },
): Promise<{ report: EvalReport; result: EvalRunResult; cassetteFile?: string }> {
  const mode = o.mode ?? 'live';
  const runId = o.runId ?? `run_${randomBytes(5).toString('hex')}`;
  const cassetteFile = o.cassette ?? defaultCassette(file, name);
  if (mode === 'replay') await loadCassette(target.pool, runId, readCassette(cassetteFile).entries);
  const model: ModelConfig | undefined =
    o.provider || o.model
      ? { ...(o.provider ? { provider: o.provider } : {}), ...(o.model ? { model: o.model } : {}) }
      : suite.model;
  const input: EvalRunInput = {
    runId,
    suite: name,
    mode,
    // The agent: --agent (the run's, over every case), else the case's, else the suite's.
    cases: cases
      .map((c) => ({ ...c, agent: c.agent ?? suite.agent, ...(o.provider || o.model ? { model: undefined } : {}) }))
      .map(stripUndefined),
    trials: Object.fromEntries(cases.map((c) => [c.id, trialsOf(suite, c, o.trials)])),
    concurrency: o.concurrency ?? 4,
    ...(o.agent ? { agent: o.agent } : {}),
    ...(model ? { model } : {}),
    ...(suite.judge ? { judge: suite.judge } : {}),
    options: {
      file,
      ...(o.agent ? { agent: o.agent } : {}),
      ...(o.provider ? { provider: o.provider } : {}),
      ...(o.model ? { model: o.model } : {}),
      ...(o.trials ? { trials: o.trials } : {}),
      concurrency: o.concurrency ?? 4,
    },
  };
  const result = await target.temporal.workflow.execute<(i: EvalRunInput) => Promise<EvalRunResult>>(
    'EvalRunWorkflow',
    {
      taskQueue: target.taskQueue ?? TASK_QUEUE,
      workflowId: evalRunWorkflowId(runId),
      args: [input],
      staticSummary: `eval ${name} (${mode}, ${cases.length} cases)`,
    },
  );
  let written: string | undefined;
  if (mode === 'record') {
    const cassette: CassetteFile = { version: 1, suite: name, entries: await cassetteEntries(target.pool, runId) };
    mkdirSync(dirname(cassetteFile), { recursive: true });
    writeFileSync(cassetteFile, `${JSON.stringify(cassette, null, 1)}\n`);
    written = cassetteFile;
  }
  let changes: EvalReport['changes'] = [];
  if (o.compare !== undefined) {
    const baseline = await getEvalRun(target.pool, o.compare);
    if (!baseline?.summary) throw new DreactError(`no finished eval run ${o.compare} to compare with`, 'not_found');
    changes = compareRuns(baseline.summary, result.summary);
  }
  const report: EvalReport = {
    runId,
    suite: name,
    mode,
    ...((o.agent ?? suite.agent) ? { agent: (o.agent ?? suite.agent)! } : {}),
    ...(model?.provider ? { provider: model.provider + (model.model ? `:${model.model}` : '') } : {}),
    summary: result.summary,
    trials: await evalTrials(target.pool, runId),
    ...(o.compare !== undefined ? { baseline: o.compare } : {}),
    changes,
    exitCode: exitCodeOf(result.summary, changes),
  };
  return { report, result, ...(written ? { cassetteFile: written } : {}) };
}

const stripUndefined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

export function registerEvalCommands(program: Command): void {
  program
    .command('eval')
    .description(
      'run an eval suite (evals/<suite>.yaml) as Temporal workflows and report; `dreact eval runs` lists runs',
    )
    .argument('<suite>', 'suite name or file, or `runs`')
    .option('--agent <name>', "the agent to evaluate (default: each case's, else the suite's, else default)")
    .option('--provider <name>', "scripted | anthropic | openai (default: the cases' models)")
    .option('--model <id>', 'model id')
    .option('--trials <k>', 'trials per case (pass@k, pass^k)', int)
    .option('--concurrency <n>', 'trials at a time (default 4)', int)
    .option('--case <ids...>', 'only these cases')
    .option('--compare <runId>', 'regressions and improvements against this run')
    .option('--json', 'the report as JSON')
    .option('--html <file>', 'also write a standalone HTML report')
    .option('--record', 'run against the live provider and write the cassette')
    .option('--replay', 'answer every model call from the cassette (offline)')
    .option('--cassette <file>', 'the cassette file (default evals/cassettes/<suite>.json)')
    .option('--suite <name>', '(with `runs`) only this suite')
    .action(async (suite: string, o) => {
      if (o.record && o.replay) throw new InvalidArgumentError('--record and --replay exclude each other');
      if (o.provider !== undefined && !['scripted', 'anthropic', 'openai'].includes(o.provider))
        throw new InvalidArgumentError(`unknown provider "${o.provider}" (scripted | anthropic | openai)`);
      const code = await withSession(async (s) => {
        if (suite === 'runs') {
          const runs = await listEvalRuns(s.db.pool, { ...(o.suite ? { suite: o.suite } : {}) });
          if (o.json) console.log(JSON.stringify(runs, null, 2));
          else
            for (const r of runs)
              console.log(
                `${r.id}  ${r.suite}  ${r.mode}  ${r.status}  ${r.summary ? `${r.summary.passedCases}/${r.summary.totalCases} cases` : ''}  ${r.startedAt}`,
              );
          return 0;
        }
        const { report, cassetteFile } = await runEval(
          {
            temporal: s.temporal,
            pool: s.db.pool,
            ...(s.api.opts.taskQueue ? { taskQueue: s.api.opts.taskQueue } : {}),
          },
          {
            suite,
            agent: o.agent,
            provider: o.provider,
            model: o.model,
            trials: o.trials,
            concurrency: o.concurrency,
            compare: o.compare,
            cases: o.case,
            cassette: o.cassette,
            mode: o.record ? 'record' : o.replay ? 'replay' : 'live',
          },
        );
        const links: ReportLinks = { workflow: (id) => workflowUrl(s.info, id) };
        if (o.html) writeFileSync(o.html, renderHtml(report, links));
        console.log(o.json ? JSON.stringify(report, null, 2) : renderTable(report));
        if (cassetteFile && !o.json) console.error(`cassette written: ${cassetteFile}`);
        if (report.exitCode === 0) return 0;
        const failed = report.summary.totalCases - report.summary.passedCases;
        const regressions = report.changes.filter((c) => c.kind === 'regression').length;
        return `${failed} failing case(s), ${regressions} regression(s) in run ${report.runId}`;
      });
      // A failing case or a regression: exit 1 (the CI gate).
      if (code !== 0) throw new DreactError(`eval ${suite}: ${code}`, 'failed');
    });
}
