import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawnWorkerProcess } from '../support/worker-process';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import type { ToolImpl } from '../../activities/tools/types';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('durable');
});
after(async () => stack.teardown());

const spawnWorker = (): ChildProcess => spawnWorkerProcess(stack);

test('kill -9 of the worker mid-turn, then restart: the turn completes with no duplicate blocks and the side effect once', async () => {
  const conv = uniqueId('conv');
  let worker = spawnWorker();
  await stack.client.startTurn(conv, 'write then think slowly', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          callTool('react.write', { path: 'effect.md', channel: 'internal', content: 'side effect', kind: 'file' }),
          complete('finished after a crash'),
        ],
        chunkSize: 2,
        latencyMs: 40,
      },
    },
  });
  // Wait until round 1's tool ran and round 2 is streaming, then kill the worker hard.
  await waitFor(
    'the write tool to finish',
    async () => (await loadBlocks(stack.db.pool, conv)).some((b) => b.type === 'react.tool.result'),
    60_000,
  );
  await waitFor('round 2 to start streaming', async () => {
    const r = await stack.db.pool.query(
      `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta' AND (payload->>'round')::int = 2`,
      [conv],
    );
    return r.rows[0].n > 3;
  });
  worker.kill('SIGKILL');
  await new Promise((r) => worker.once('exit', r));
  worker = spawnWorker();
  try {
    const result = await stack.client.result(conv, 1);
    assert.equal(result.completionPath, 'complete');
    assert.equal(result.answer, 'finished after a crash');
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.equal(new Set(blocks.map((b) => b.id)).size, blocks.length);
  assert.equal(blocks.filter((b) => b.type === 'react.tool.call').length, 1);
  assert.equal(blocks.filter((b) => b.type === 'assistant.completion').length, 1);
  const files = await stack.db.pool.query(
    `SELECT convert_from(b.bytes, 'UTF8') AS content, a.created_at = a.updated_at AS untouched
       FROM artifacts a JOIN workspace_blobs b ON b.conversation_id = a.conversation_id AND b.sha256 = a.blob_sha256
      WHERE a.conversation_id = $1 AND a.kind = 'file'`,
    [conv],
  );
  assert.equal(files.rowCount, 1);
  assert.equal(files.rows[0].content, 'side effect');
  assert.equal(files.rows[0].untouched, true, 'the write ran once');
  const retries = await stack.db.pool.query(
    `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'retry'`,
    [conv],
  );
  assert.ok(retries.rows[0].n >= 1, 'the retried decide attempt published a retry marker');
});

const blob: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.blob',
    description: 'Returns 1 MB of text (history hygiene test).',
    params: z.object({}),
    strategy: 'exploration',
    timeoutMs: 30_000,
    retry: { maximumAttempts: 3, initialInterval: 1000, backoffCoefficient: 2 },
    summarize: () => 'tool test.blob 1 MB',
  }),
  impl: { id: 'test.blob', run: async () => ({ ok: true, text: 'b'.repeat(1024 * 1024) }) },
};

test('history hygiene: a tool returning 1 MB grows Temporal history by under 4 KB per round', async () => {
  await stack.startWorker({ extraTools: [blob] });
  try {
    const conv = uniqueId('conv');
    await stack.client.startTurn(conv, 'produce big outputs', {
      model: {
        provider: 'scripted',
        script: {
          rounds: [callTool('test.blob', {}), callTool('test.blob', {}), callTool('test.blob', {}), complete('ok')],
        },
      },
    });
    const result = await stack.client.result(conv, 1);
    assert.equal(result.rounds, 4);
    const blocks = await loadBlocks(stack.db.pool, conv);
    assert.equal(
      blocks.filter((b) => b.type === 'react.tool.result' && (b.text?.length ?? 0) === 1024 * 1024).length,
      3,
      'full results stored in Postgres',
    );

    const history = await stack.server.env.client.workflow.getHandle(result.workflowId).fetchHistory();
    // Encoded protobuf size: what the server stores.
    const sizes = (history.events ?? []).map((e) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length);
    const total = sizes.reduce((a, b) => a + b, 0);
    const biggest = Math.max(...sizes);
    assert.ok(biggest < 4096, `largest history event is ${biggest} bytes`);
    // Per round: everything between consecutive decide schedules (decide + tool activities). The title
    // call runs beside round 1: its events are the turn's, not a round's.
    const events = history.events ?? [];
    const gateIds = new Set(
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'gate')
        .map((e) => String(e.eventId)),
    );
    const gateEvent = (e: temporal.api.history.v1.IHistoryEvent) =>
      gateIds.has(String(e.eventId)) ||
      [e.activityTaskStartedEventAttributes, e.activityTaskCompletedEventAttributes].some(
        (a) => a && gateIds.has(String(a.scheduledEventId)),
      );
    // A workflow task the gate's completion woke (it lands inside round 1 when the gate ends while a
    // tool runs) is the gate's too: its scheduled event follows the completion directly.
    const gateTasks = new Set<string>();
    events.forEach((e, i) => {
      const before = events[i - 1];
      if (e.workflowTaskScheduledEventAttributes && before?.activityTaskCompletedEventAttributes && gateEvent(before))
        gateTasks.add(String(e.eventId));
    });
    const ofGate = (e: temporal.api.history.v1.IHistoryEvent) =>
      gateEvent(e) ||
      gateTasks.has(String(e.eventId)) ||
      [e.workflowTaskStartedEventAttributes, e.workflowTaskCompletedEventAttributes].some(
        (a) => a && gateTasks.has(String(a.scheduledEventId)),
      );
    const scheduled = events
      .map((e, i) => ({ i, e }))
      .filter(({ e }) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide');
    for (let r = 0; r + 1 < scheduled.length; r++) {
      const window = events
        .slice(scheduled[r]!.i, scheduled[r + 1]!.i)
        .map((e, k) => ({ e, size: sizes[scheduled[r]!.i + k]! }))
        .filter(({ e }) => !ofGate(e));
      const bytes = window.reduce((a, { size }) => a + size, 0);
      const listing = window.map(({ e, size }) => `${e.eventType} ${size}`).join(', ');
      assert.ok(bytes < 4096, `round ${r + 1} added ${bytes} bytes of history: ${listing}`);
      console.log(`round ${r + 1}: ${bytes} bytes: ${listing}`);
    }
    assert.ok(total < 64 * 1024, `whole turn history is ${total} bytes`);
  } finally {
    await stack.stopWorker();
  }
});

test('kill -9 of the worker during the compaction summariser, then restart: exactly one summary, the turn completes', async () => {
  const conv = uniqueId('conv');
  let worker = spawnWorker();
  const big = (n: number) =>
    callTool('react.write', {
      path: `big/${n}.md`,
      channel: 'internal',
      content: `section ${n} `.repeat(450),
      kind: 'file',
    });
  await stack.client.startTurn(conv, 'one long task that outgrows its budget', {
    contextMaxTokens: 6_000,
    model: {
      provider: 'scripted',
      script: {
        rounds: [big(1), big(2), big(3), big(4), big(5), big(6), big(7), big(8), complete('done after the crash')],
        chunkSize: 4096,
        summaryLatencyMs: 4_000,
      },
    },
  });
  // The summariser is running once its compaction is planned; kill the worker then.
  await waitFor(
    'a compaction to be planned',
    async () =>
      (
        await stack.db.pool.query(
          `SELECT count(*)::int AS n FROM compactions WHERE conversation_id = $1 AND status = 'planned'`,
          [conv],
        )
      ).rows[0].n > 0,
    60_000,
  );
  await new Promise((r) => setTimeout(r, 500));
  worker.kill('SIGKILL');
  await new Promise((r) => worker.once('exit', r));
  worker = spawnWorker();
  try {
    const result = await stack.client.result(conv, 1);
    assert.equal(result.answer, 'done after the crash');
    assert.ok((result.compactions ?? 0) >= 1);
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
  const blocks = await loadBlocks(stack.db.pool, conv);
  const batches = blocks.filter((b) => b.type === 'conv.turn.checkpoint' || b.type === 'conv.range.summary');
  const ids = batches.map((b) => String(b.meta['compaction_id']));
  assert.equal(new Set(ids).size, ids.length, `one summary/checkpoint per compaction: ${ids.join(', ')}`);
  const rows = await stack.db.pool.query(`SELECT id, status FROM compactions WHERE conversation_id = $1 ORDER BY id`, [
    conv,
  ]);
  assert.ok(
    rows.rows.every((r) => r.status === 'committed'),
    JSON.stringify(rows.rows),
  );
  assert.equal(rows.rowCount, new Set(ids).size);
});
