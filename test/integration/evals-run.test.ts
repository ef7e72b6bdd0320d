import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestStack, type TestStack } from '../support/stack';
import { runEval, type EvalTarget } from '../../apps/cli/eval-command';
import { renderTable } from '../../core/evals/report';
import { countEvalTrials, listEvalRuns } from '../../store/eval-store';
import { feedbackOf } from '../../store/feedback-store';
import { conversationOwner } from '../../store/tenancy-store';

let stack: TestStack;
let target: EvalTarget;
const dir = mkdtempSync(join(tmpdir(), 'evals-'));
const suite = join(dir, 'smoke.yaml');
copyFileSync(join(__dirname, '../fixtures/evals/smoke.yaml'), suite);

before(async () => {
  stack = await createTestStack('evals');
  await stack.startWorker();
  target = { temporal: stack.server.env.client, pool: stack.db.pool, taskQueue: stack.taskQueue };
});
after(async () => stack.teardown());

test('a suite runs as workflows: the passing case passes, the broken one fails naming its checks, exit 1', async () => {
  const { report } = await runEval(target, { suite, trials: 2, concurrency: 2 });
  const table = renderTable(report);
  assert.equal(report.exitCode, 1, table);
  const [ok, broken] = report.summary.cases;
  assert.equal(ok!.caseId, 'writes-notes');
  assert.equal(ok!.pass, true, table);
  assert.equal(ok!.passedTrials, 2);
  assert.equal(broken!.pass, false);
  assert.match(table, /broken trial 1: tools\.match\(subset\): expected \[web_search\], observed \[react\.write/);
  assert.match(
    table,
    /broken trial 1: answer\.contains\[0\]: expected contains "refund", observed "I wrote a plan note/,
  );
  assert.ok(ok!.tokens > 0 && ok!.rounds === 3);
  // Each trial its own conversation in the eval tenant, and its verdict as machine feedback.
  const t = report.trials.find((x) => x.caseId === 'writes-notes' && x.trial === 2)!;
  assert.match(t.conversationId, /^eval~smoke~run_[0-9a-f]+\.writes-notes\.t2$/);
  const owner = await conversationOwner(stack.db.pool, t.conversationId);
  assert.deepEqual([owner?.tenantId, owner?.projectId], ['eval', 'smoke']);
  const fb = await feedbackOf(stack.db.pool, t.conversationId);
  assert.equal(fb.length, 1);
  assert.deepEqual([fb[0]!.origin, fb[0]!.rating, fb[0]!.source], ['machine', 'ok', 'eval:smoke/writes-notes']);
  assert.match(fb[0]!.text ?? '', /case writes-notes trial 2: pass 7\/7 checks/);
  // Temporal UI: the trial's details say its verdict.
  const desc = await stack.server.env.client.workflow.getHandle(t.workflowId).describe();
  assert.equal(await desc.staticSummary(), 'case writes-notes trial 2');
  assert.equal(await countEvalTrials(stack.db.pool, report.runId), 4);
  const runs = await listEvalRuns(stack.db.pool);
  assert.equal(runs[0]!.id, report.runId);
  assert.equal(runs[0]!.summary?.passedCases, 1);
});

test('record then replay: the cassette answers offline; a changed render fails naming case and round', async () => {
  const cassette = join(dir, 'cassettes', 'smoke.json');
  const recorded = await runEval(target, { suite, mode: 'record', cases: ['writes-notes'] });
  assert.equal(recorded.report.exitCode, 0, renderTable(recorded.report));
  const file = JSON.parse(readFileSync(cassette, 'utf8')) as { entries: Array<{ key: string }> };
  assert.ok(
    file.entries.some((e) => e.key === 'writes-notes/t1/turn_1/round:3'),
    JSON.stringify(file.entries.map((e) => e.key)),
  );
  const replayed = await runEval(target, { suite, mode: 'replay', cases: ['writes-notes'] });
  assert.equal(replayed.report.exitCode, 0, renderTable(replayed.report));
  // The same case with another prompt renders another request: the replay fails at round 1.
  const changed = join(dir, 'smoke.yaml');
  const text = readFileSync(suite, 'utf8');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(changed, text.replace(/Make a plan note and check it/g, 'Make a plan note, then check it'));
  const broken = await runEval(target, { suite: changed, mode: 'replay', cases: ['writes-notes'], cassette });
  writeFileSync(changed, text);
  const table = renderTable(broken.report);
  assert.equal(broken.report.exitCode, 1);
  assert.match(
    table,
    /cassette mismatch in suite smoke, case writes-notes trial 1, turn_1 (round:1|structured:conversation_title)/,
  );
});
