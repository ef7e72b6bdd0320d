/**
 * "A heartbeat-timeout retry is not a steer" (issue 41): a worker that stalls mid-decision (here:
 * SIGSTOP for longer than the round's heartbeat timeout, as on an overloaded machine) loses the
 * attempt to the server, which retries it; when the worker resumes, the lost attempt's cancellation
 * must not be recorded as `(interrupted by a steer)` — the model would read it next round — nor
 * published as an interrupted round. The turn completes on the retry with one answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { spawnWorkerProcess } from '../../bench/worker-process';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('round_timeout');
});
after(async () => stack.teardown());

test('a decision attempt lost to its heartbeat timeout is retried without a steer in the timeline or the stream', async () => {
  const worker = spawnWorkerProcess({
    TEMPORAL_ADDRESS: stack.server.address,
    DREACT_DB_SCHEMA: stack.db.schema,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_TASK_QUEUE: stack.taskQueue,
    DREACT_WORKER_STATE_DIR: mkdtempSync(join(tmpdir(), 'dreact-state-')),
  });
  try {
    await worker.ready;
    const conv = uniqueId('conv');
    const started = await stack.client.startTurn(conv, 'think slowly', {
      model: {
        provider: 'scripted',
        script: { rounds: [thinking('slowly '.repeat(80)) + complete('answered once')], chunkSize: 4, latencyMs: 40 },
      },
    });
    await waitFor('the decision to stream', async () => {
      const r = await stack.db.pool.query(
        `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
        [conv],
      );
      return r.rows[0].n > 3;
    });
    // Stalled past the 2 s heartbeat timeout: the server times the attempt out and retries it.
    worker.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 5_000));
    worker.child.kill('SIGCONT');
    const result = await stack.client.result(conv, started.turnIndex);
    assert.match(result.answer ?? '', /^answered once/);
    // The lost attempt learns it was lost at its next heartbeat after the resume (within a second):
    // what it records then is what this test is about, so give it that time.
    await new Promise((r) => setTimeout(r, 2_500));

    const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
    const retried = (history.events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes)
      .find((a) => (a?.attempt ?? 1) > 1);
    assert.ok(retried, 'the decision ran a second attempt');
    assert.match(retried.lastFailure?.message ?? '', /timeout|timed out/i, 'the first attempt timed out');

    const blocks = await loadBlocks(stack.db.pool, conv);
    assert.deepEqual(
      blocks.filter((b) => b.meta['interrupted'] === true || /interrupted by a steer/.test(b.text ?? '')),
      [],
      'no steer recorded',
    );
    assert.equal(blocks.filter((b) => b.type === 'user.steer').length, 0);
    assert.equal(blocks.filter((b) => b.type === 'assistant.completion').length, 1, 'one answer');
    const events = await readEvents(stack.db.pool, conv, 0);
    assert.deepEqual(
      events.filter((e) => e.kind === 'step' && (e.payload as { phase?: string }).phase === 'interrupted'),
      [],
      'no interrupted round published',
    );
  } finally {
    worker.child.kill('SIGCONT');
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
