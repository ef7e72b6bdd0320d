/**
 * Evals as a CI gate, end to end on real Temporal and Postgres: `--compare` flags the regression an
 * agent's changed instructions cause (the cassette no longer matches its render), a worker stopped
 * mid-run is replaced and the run finishes with every trial counted once, the rubric's LLM judge
 * through the Anthropic adapter against the emulator, and the HTML report in chromium (screenshot
 * kept in test-artifacts/evals/); the agent's own judge role over the suite's judge; which agent a
 * trial runs (--agent, else the case's, else the suite's).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { complete, createTestStack, thinking, waitFor, type TestStack } from '../support/stack';
import { runEval, type EvalTarget } from '../../apps/cli/eval-command';
import { renderHtml, renderTable } from '../../core/evals/report';
import { countEvalTrials, evalTrials } from '../../store/eval-store';
import { feedbackOf } from '../../store/feedback-store';
import { listTurns } from '../../store/turn-store';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { createAnthropicProvider } from '../../activities/providers/anthropic';
import { createScriptedProvider, resolveScript } from '../../activities/providers/scripted';
import { parseSuite } from '../../core/evals/suite';
import type { EvalRunInput, EvalRunResult } from '../../workflows/eval-run';
import { needs } from '../support/requirements';
import { JUDGE_SYSTEM } from '../../core/evals/judge';
import { launchChromium } from '../support/browser';

let stack: TestStack;
let target: EvalTarget;
let emu: AnthropicEmulator;
const dir = mkdtempSync(join(tmpdir(), 'evals-gates-'));
const agents = join(dir, 'agents');
mkdirSync(agents);
writeFileSync(join(agents, 'support-a.yaml'), 'name: support-a\ninstructions: You are Acme support. Keep notes.\n');
writeFileSync(join(agents, 'support-b.yaml'), 'name: support-b\ninstructions: You are Acme support. Be brief.\n');
// An agent whose rubric judge is a model of its own (roles.judge), not the suite's judge.
writeFileSync(
  join(agents, 'strict-judge.yaml'),
  'name: strict-judge\ninstructions: You are Acme support.\nroles:\n  judge: { provider: anthropic, model: claude-judge-1 }\n',
);

const suiteFile = (name: string, yaml: string) => {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  return file;
};
const notes = suiteFile(
  'notes',
  `model: { provider: scripted, script: demo }
cases:
  - id: writes-notes
    turns: ['Make a plan note and check it']
    expect:
      tools: { match: subset, calls: [{ tool: react.write, params: { path: { regex: notes } } }] }
      answer: { contains: ['plan note'] }
`,
);

const startWorker = () => {
  const anthropic = createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test-key', model: 'claude-sonnet-5-5' });
  return stack.startWorker({
    agents: { dir: agents },
    provider: (cfg) => (cfg.provider === 'anthropic' ? anthropic : createScriptedProvider(resolveScript(cfg.script))),
  });
};

before(async () => {
  emu = await startAnthropicEmulator();
  stack = await createTestStack('evals_gates');
  await startWorker();
  target = { temporal: stack.server.env.client, pool: stack.db.pool, taskQueue: stack.taskQueue };
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

test("--compare flags the regression a change of the agent's instructions causes; exit 1", async () => {
  const cassette = join(dir, 'cassettes', 'notes.json');
  const baseline = await runEval(target, { suite: notes, agent: 'support-a', mode: 'record', cassette });
  assert.equal(baseline.report.exitCode, 0, renderTable(baseline.report));
  const same = await runEval(target, {
    suite: notes,
    agent: 'support-a',
    mode: 'replay',
    cassette,
    compare: baseline.report.runId,
  });
  assert.equal(same.report.exitCode, 0, renderTable(same.report));
  assert.deepEqual(same.report.changes, []);
  const changed = await runEval(target, {
    suite: notes,
    agent: 'support-b',
    mode: 'replay',
    cassette,
    compare: baseline.report.runId,
  });
  const table = renderTable(changed.report);
  assert.equal(changed.report.exitCode, 1, table);
  assert.deepEqual(
    changed.report.changes.map((c) => [c.caseId, c.kind]),
    [['writes-notes', 'regression']],
  );
  assert.match(table, /writes-notes\s+FAIL.*regression/);
  assert.match(table, /cassette mismatch in suite notes, case writes-notes trial 1, turn_1 round:1/);
  assert.match(table, new RegExp(`vs ${baseline.report.runId}: 1 regression\\(s\\), 0 improvement\\(s\\)`));
});

// The stop used to hang: a cancel that reached evalPlayTurn during its startTurn call was never
// seen (the abort listener was added after it fired), so the shutdown waited for ever on an activity
// waiting for a turn that no worker ran; the retry was never scheduled on the replacement (issue 33).
test(
  'a worker stopped mid-run is replaced: the run finishes and each trial counts once',
  { timeout: 180_000 },
  async () => {
    const file = suiteFile(
      'slow',
      `model: ${JSON.stringify({
        provider: 'scripted',
        script: { rounds: [thinking('slowly '.repeat(20)) + complete('slow answer')], chunkSize: 8, latencyMs: 40 },
      })}
trials: 3
cases:
  - id: slow-answer
    turns: ['take your time']
    expect: { answer: { contains: [slow answer] } }
`,
    );
    const suite = parseSuite((await import('node:fs')).readFileSync(file, 'utf8'), file);
    const runId = 'run_resume';
    const input: EvalRunInput = {
      runId,
      suite: 'slow',
      mode: 'live',
      cases: suite.cases,
      trials: { 'slow-answer': 3 },
      concurrency: 1,
      model: suite.model!,
      options: {},
    };
    const handle = await stack.server.env.client.workflow.start<(i: EvalRunInput) => Promise<EvalRunResult>>(
      'EvalRunWorkflow',
      { taskQueue: stack.taskQueue, workflowId: `eval/${runId}`, args: [input] },
    );
    // Two stops. The first lands as the second trial opens — often while its evalPlayTurn is in
    // startTurn — the second while the third trial's turn streams (its evalPlayTurn waiting for
    // the result). Each time the shutdown cancels evalPlayTurn, which must end at once (or the
    // shutdown waits for ever), and the replacement runs its retry.
    const replace = async () => {
      const stopping = Date.now();
      await stack.stopWorker();
      const stoppedMs = Date.now() - stopping;
      assert.ok(stoppedMs < 15_000, `the worker's shutdown took ${stoppedMs} ms (an activity ignored its cancel)`);
      await startWorker();
    };
    await waitFor('the first trial scored', async () => (await evalTrials(stack.db.pool, runId)).length >= 1, 60_000);
    await waitFor('the second trial started', async () => (await countEvalTrials(stack.db.pool, runId)) >= 2, 30_000);
    await replace();
    const third = `eval~slow~${runId}.slow-answer.t3`;
    await waitFor(
      'the third trial streaming',
      async () =>
        (
          await stack.db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
            [third],
          )
        ).rows[0]!.n > 3,
      60_000,
    );
    await replace();
    const result = await handle.result();
    assert.equal(result.summary.trials, 3);
    assert.equal(result.summary.passedTrials, 3, JSON.stringify(result.summary));
    assert.equal(await countEvalTrials(stack.db.pool, runId), 3);
    assert.deepEqual(
      result.trials.map((t) => t.summary),
      [1, 2, 3].map((n) => `case slow-answer trial ${n}: pass 2/2 checks`),
    );
    const retried: string[] = [];
    for (const t of await evalTrials(stack.db.pool, runId)) {
      const fb = await feedbackOf(stack.db.pool, t.conversationId);
      assert.equal(fb.filter((f) => f.origin === 'machine').length, 1, `${t.conversationId}: one verdict`);
      const history = await stack.server.env.client.workflow.getHandle(t.workflowId).fetchHistory();
      if ((history.events ?? []).some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1))
        retried.push(t.workflowId);
    }
    // The second stop cut the third trial's evalPlayTurn, which its replacement ran again (the
    // first one cut the second trial's when it landed inside it).
    assert.ok(retried.includes(`eval/${runId}/slow-answer/3`), retried.join(', '));
    assert.ok(!retried.includes(`eval/${runId}/slow-answer/1`), retried.join(', '));
  },
);

test('the rubric is scored by an LLM judge (Anthropic adapter against the emulator)', async () => {
  const file = suiteFile(
    'judged',
    `model: { provider: scripted, script: echo }
judge: { provider: anthropic }
cases:
  - id: good
    turns: ['Define a refund window']
    rubric: The answer defines a refund window.
    threshold: 0.7
  - id: bad
    turns: ['Define a refund window badly']
    rubric: The answer defines a refund window.
    threshold: 0.7
`,
  );
  emu.reset();
  emu.respond((req) => {
    const text = JSON.stringify(req.body.messages);
    return reply.text(
      /badly/.test(text) ? '{"score": 0.2, "reason": "no definition"}' : '{"score": 0.9, "reason": "defines it"}',
    );
  });
  const { report } = await runEval(target, { suite: file, concurrency: 2 });
  const table = renderTable(report);
  assert.deepEqual(
    report.summary.cases.map((c) => [c.caseId, c.pass]),
    [
      ['good', true],
      ['bad', false],
    ],
    table,
  );
  assert.match(table, /bad trial 1: rubric: expected score ≥ 0\.7, observed 0\.2 \(no definition\)/);
  const judged = emu.requests.filter((r) => JSON.stringify(r.body.system).includes('grade'));
  assert.equal(judged.length, 2);
  assert.match(JSON.stringify(judged[0]!.body.system), new RegExp(JUDGE_SYSTEM.slice(0, 30)));
  assert.match(JSON.stringify(judged[0]!.body.messages), /RUBRIC:\\nThe answer defines a refund window\./);

  // The HTML report in a real browser (skipped without chromium; required under CI).
  const skip = needs({ group: 'evals HTML report (chromium)', requirement: 'chromium' });
  if (skip) return;
  const shots = join(__dirname, '..', '..', 'test-artifacts', 'evals');
  mkdirSync(shots, { recursive: true });
  const html = join(shots, 'report.html');
  writeFileSync(
    html,
    renderHtml(report, {
      workflow: (id) => `http://temporal-ui.test/namespaces/default/workflows/${encodeURIComponent(id)}`,
      timeline: (id) => `http://gateway.test/v1/conversations/${encodeURIComponent(id)}/timeline`,
    }),
  );
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`file://${html}`);
    assert.equal(await page.locator('section.case').count(), 2);
    assert.match((await page.locator('section.case.fail h2').textContent()) ?? '', /bad\s+FAIL/);
    const link = page.locator('section.case.fail a', { hasText: 'Temporal UI' });
    assert.match((await link.getAttribute('href')) ?? '', /workflows\/eval%2Frun_/);
    assert.match((await page.locator('tr.check').first().textContent()) ?? '', /rubric expected score ≥ 0\.7/);
    await page.screenshot({ path: join(shots, 'report.png'), fullPage: true });
  } finally {
    await browser.close();
  }
});

test("the rubric's judge is the evaluated agent's `judge` role, over the suite's judge; its ledger row says so", async () => {
  const file = suiteFile(
    'role-judged',
    `agent: strict-judge
model: { provider: scripted, script: echo }
judge: { provider: scripted, script: { rounds: ['{"score": 0.1, "reason": "the suite judge"}'] } }
cases:
  - id: role-judged
    turns: ['Define a refund window']
    rubric: The answer defines a refund window.
    threshold: 0.7
`,
  );
  emu.reset();
  emu.respond(() => reply.text('{"score": 0.95, "reason": "the role judge"}'));
  const { report } = await runEval(target, { suite: file });
  const table = renderTable(report);
  assert.equal(report.exitCode, 0, table);
  const rubric = report.trials[0]!.checks.find((c) => c.name === 'rubric')!;
  assert.match(rubric.observed ?? '', /0\.95 \(the role judge\)/, table);
  // The judge's request went to the role's model through the Anthropic adapter.
  assert.equal(emu.requests.length, 1);
  assert.equal(emu.requests[0]!.body.model, 'claude-judge-1');
  assert.match(JSON.stringify(emu.requests[0]!.body.messages), /RUBRIC:\\nThe answer defines a refund window\./);
  // The ledger has the judge's call as its own purpose, on the trial's last turn, with the role's model.
  const conv = report.trials[0]!.conversationId;
  const rows = await stack.db.pool.query<{ purpose: string; provider: string; model: string | null; turn_id: string }>(
    `SELECT purpose, provider, model, turn_id FROM usage_ledger WHERE conversation_id = $1 ORDER BY purpose`,
    [conv],
  );
  const judged = rows.rows.filter((r) => r.purpose === 'judge');
  assert.equal(judged.length, 1, JSON.stringify(rows.rows));
  assert.match(judged[0]!.provider, /^anthropic/);
  assert.equal(judged[0]!.model, 'claude-judge-1');
  assert.equal(judged[0]!.turn_id, 'turn_1');
  assert.ok(
    rows.rows.some((r) => r.purpose === 'decision' && r.provider === 'scripted'),
    JSON.stringify(rows.rows),
  );
});

test("a case's agent wins over the suite's, --agent over both", async () => {
  const file = suiteFile(
    'agents',
    `agent: support-a
model: { provider: scripted, script: echo }
cases:
  - id: suite-agent
    turns: ['hello']
  - id: case-agent
    agent: support-b
    turns: ['hello']
`,
  );
  const ran = async (o: { agent?: string }) => {
    const { report } = await runEval(target, { suite: file, ...o });
    assert.equal(report.exitCode, 0, renderTable(report));
    const out: Record<string, string | null> = {};
    for (const t of report.trials) out[t.caseId] = (await listTurns(stack.db.pool, t.conversationId))[0]!.agentName;
    return out;
  };
  assert.deepEqual(await ran({}), { 'case-agent': 'support-b', 'suite-agent': 'support-a' });
  assert.deepEqual(await ran({ agent: 'strict-judge' }), {
    'case-agent': 'strict-judge',
    'suite-agent': 'strict-judge',
  });
});
