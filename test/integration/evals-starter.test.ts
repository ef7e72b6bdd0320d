/**
 * The starter suite (evals/starter.yaml) in replay mode, as CI runs it: every model call answered
 * from evals/cassettes/starter.json, the tools, render and runtime real (Temporal, Postgres, the
 * suite's own fixture pages — served by `runEval` itself, no test server and no
 * DREACT_WEB_ALLOW_PRIVATE — for web_fetch, the bubblewrap sandbox for exec). Every case passes; a change to the
 * prompt render, a tool's output or the runtime that changes a request fails here naming the case
 * and the round. `DREACT_EVALS_RECORD=1` records the cassette again instead (against the cases'
 * scripted model).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { createTestStack, type TestStack } from '../support/stack';
import { runEval } from '../../apps/cli/eval-command';
import { renderTable } from '../../core/evals/report';
import { listTurns } from '../../store/turn-store';
import { loadBlocks } from '../../store/timeline-store';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { execScratch, LOCAL_SANDBOX } from '../support/exec';
import { countSkipped, needs } from '../support/requirements';

const record = process.env.DREACT_EVALS_RECORD === '1';
const noSandbox = needs(LOCAL_SANDBOX);
const root = execScratch('evals-starter');

let stack: TestStack;
before(async () => {
  stack = await createTestStack('evals_starter');
  await stack.startWorker({
    ...(noSandbox
      ? {}
      : {
          extraTools: [
            createExecTool({
              backend: new LocalBackend({ stateRoot: path.join(root, 'state') }),
              workRoot: path.join(root, 'work'),
              pollMs: 50,
            }),
          ],
        }),
  });
});
after(async () => {
  await stack.teardown();
  rmSync(root, { recursive: true, force: true });
});

async function passes(mode: 'live' | 'record' | 'replay') {
  // Without a sandbox the code case cannot run (counted in the skip summary; required under CI).
  const skipCode = countSkipped(LOCAL_SANDBOX, noSandbox);
  const { report, result } = await runEval(
    { temporal: stack.server.env.client, pool: stack.db.pool, taskQueue: stack.taskQueue },
    {
      suite: path.join(__dirname, '../../evals/starter.yaml'),
      mode,
      concurrency: 4,
      ...(skipCode ? { cases: undefined } : {}),
    },
  );
  const table = renderTable(report);
  const failing = report.summary.cases.filter((c) => !c.pass && !(skipCode && c.caseId === 'runs-code'));
  assert.deepEqual(
    failing.map((c) => c.caseId),
    [],
    table,
  );
  assert.equal(report.summary.totalCases, 14, table);
  // The compaction case did compact, and the judge scored the rubric.
  const compacted = report.trials.find((t) => t.caseId === 'compacts-long-conversation')!;
  const blocks = await loadBlocks(stack.db.pool, compacted.conversationId);
  assert.ok(
    blocks.some((b) => b.type === 'conv.range.summary'),
    'the long conversation was compacted',
  );
  // The followup sent at round 1 is in the timeline before round 2's answer (the round that saw it).
  const followed = report.trials.find((t) => t.caseId === 'takes-followup')!;
  const types = (await loadBlocks(stack.db.pool, followed.conversationId)).map((b) => b.type);
  const at = types.indexOf('user.followup');
  assert.ok(at > types.indexOf('react.tool.result') && at < types.lastIndexOf('assistant.completion'), types.join(' '));
  // The steer sent while round 1's fetch ran stopped the fetch: the turn finalized after the steer.
  const steered = report.trials.find((t) => t.caseId === 'takes-steer')!;
  const steeredBlocks = await loadBlocks(stack.db.pool, steered.conversationId);
  const steerAt = steeredBlocks.findIndex((b) => b.type === 'user.steer');
  assert.ok(steerAt > 0, steeredBlocks.map((b) => b.type).join(' '));
  const [steeredTurn] = await listTurns(stack.db.pool, steered.conversationId);
  assert.equal(steeredTurn?.completionPath, 'steer_finalize');
  const judged = report.trials.find((t) => t.caseId === 'judged-answer')!;
  assert.ok(judged.checks.some((c) => c.name === 'rubric' && c.pass));
  assert.equal(result.trials.length, report.summary.trials);
}

// Live (the cases' scripted model) then replay, as `dreact eval starter` and `--replay` run them.
test(`the starter suite ${record ? 'records its cassette' : 'passes live'}`, () => passes(record ? 'record' : 'live'));
test('the starter suite passes in replay mode', () => passes('replay'));
