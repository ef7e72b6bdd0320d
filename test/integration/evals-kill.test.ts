/**
 * An eval run whose worker *process* is killed with SIGKILL mid-run (a trial's turn streaming): a
 * new worker process resumes the run — the dead attempts are released by the successor
 * (workers/orphaned-activities.ts) and retried — and the run finishes with each trial counted
 * exactly once: one `eval_trials` row per trial, scored, one turn per trial conversation, one
 * machine verdict per trial, and the report (through `runEval`, what `dreact eval` runs) lists
 * every trial once and passes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { complete, createTestStack, thinking, waitFor, type TestStack } from '../support/stack';
import { spawnWorkerProcess, type WorkerProcess } from '../../bench/worker-process';
import { runEval } from '../../apps/cli/eval-command';
import { renderTable } from '../../core/evals/report';
import { countEvalTrials, evalTrials, getEvalRun } from '../../store/eval-store';
import { feedbackOf } from '../../store/feedback-store';
import { listTurns } from '../../store/turn-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('evals_kill');
});
after(async () => stack.teardown());

const dir = mkdtempSync(join(tmpdir(), 'evals-kill-'));
const suite = join(dir, 'killed.yaml');
// Each trial's one round streams for ~6 s (150 chunks, 40 ms apart), so the kill lands inside a trial.
writeFileSync(
  suite,
  `model: ${JSON.stringify({
    provider: 'scripted',
    script: { rounds: [thinking('pondering '.repeat(60)) + complete('slow answer')], chunkSize: 4, latencyMs: 40 },
  })}
trials: 4
cases:
  - id: slow-answer
    turns: ['take your time']
    expect: { answer: { contains: [slow answer] }, limits: { rounds: 1 } }
`,
);

const streamed = async (conversationId: string) =>
  (
    await stack.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
      [conversationId],
    )
  ).rows[0]!.n;

test('kill -9 of the worker process mid-run: a new worker resumes; each trial counted exactly once', async () => {
  const env = {
    TEMPORAL_ADDRESS: stack.server.address,
    DREACT_DB_SCHEMA: stack.db.schema,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_TASK_QUEUE: stack.taskQueue,
    // Both workers share the journal folder: the successor fails the dead one's attempts at once.
    DREACT_WORKER_STATE_DIR: mkdtempSync(join(tmpdir(), 'dreact-state-')),
  };
  let worker: WorkerProcess = spawnWorkerProcess(env);
  await worker.ready;
  const runId = 'run_killed';
  try {
    const running = runEval(
      { temporal: stack.server.env.client, pool: stack.db.pool, taskQueue: stack.taskQueue },
      { suite, runId, concurrency: 2 },
    );
    running.catch(() => undefined);
    // Kill once a trial is scored and another one's turn is streaming.
    const victim = await waitFor(
      'a scored trial and another streaming',
      async () => {
        const scored = new Set((await evalTrials(stack.db.pool, runId)).map((t) => t.conversationId));
        if (scored.size === 0) return undefined;
        const open = await stack.db.pool.query<{ conversation_id: string }>(
          `SELECT conversation_id FROM eval_trials WHERE run_id = $1 AND status <> 'scored' ORDER BY trial`,
          [runId],
        );
        // Streaming, and its turn not yet ended (under load the deltas are seen late).
        for (const r of open.rows)
          if (
            (await streamed(r.conversation_id)) > 3 &&
            (await listTurns(stack.db.pool, r.conversation_id)).some((t) => t.status === 'running')
          )
            return r.conversation_id;
        return undefined;
      },
      90_000,
    );
    worker.child.kill('SIGKILL');
    assert.equal(await worker.exited, 'SIGKILL');
    worker = spawnWorkerProcess(env);
    await worker.ready;

    const { report } = await running;
    const table = renderTable(report);
    assert.equal(report.exitCode, 0, table);
    assert.equal(report.summary.trials, 4, table);
    assert.equal(report.summary.passedTrials, 4, table);
    assert.deepEqual(
      report.trials.map((t) => `${t.caseId}/${t.trial}`),
      [1, 2, 3, 4].map((n) => `slow-answer/${n}`),
    );
    assert.equal((await getEvalRun(stack.db.pool, runId))?.status, 'completed');
    // One row per trial, every one scored; one turn and one machine verdict per trial's conversation.
    assert.equal(await countEvalTrials(stack.db.pool, runId), 4);
    for (const t of report.trials) {
      const turns = await listTurns(stack.db.pool, t.conversationId);
      assert.deepEqual(
        turns.map((x) => [x.turnIndex, x.status]),
        [[1, 'completed']],
        t.conversationId,
      );
      const verdicts = (await feedbackOf(stack.db.pool, t.conversationId)).filter((f) => f.origin === 'machine');
      assert.equal(verdicts.length, 1, `${t.conversationId}: one verdict`);
    }
    // The kill did land inside the victim's trial: its evalPlayTurn ran a second attempt.
    const victimTrial = report.trials.find((t) => t.conversationId === victim)!;
    const history = await stack.server.env.client.workflow.getHandle(victimTrial.workflowId).fetchHistory();
    const attempts = (history.events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0)
      .filter((a) => a > 0);
    assert.ok(
      attempts.some((a) => a > 1),
      `the victim's trial retried an activity after the kill (attempts ${attempts.join(',')})`,
    );
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
