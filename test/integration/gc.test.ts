/**
 * Retention on real Temporal and Postgres: `collectGarbage` purges inactive conversations through
 * PurgeConversationWorkflow — every row of the conversation goes, a running conversation workflow
 * is stopped — and a second run finds nothing; recent conversations stay.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { collectGarbage } from '../../client/gc';
import { countBlocks } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';
import { readEvents } from '../../store/stream-bus';
import { usageRows } from '../../store/usage-store';
import { loadConversation } from '../../store/conversation-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('gc');
  await stack.startWorker();
});
after(async () => stack.teardown());

test('gc purges every row of an inactive conversation through a workflow, stops it, and is idempotent', async () => {
  const old = uniqueId('conv');
  const started = await stack.client.startTurn(old, 'write a note', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          callTool('react.write', { path: 'n.md', channel: 'internal', content: 'x', kind: 'file' }),
          complete('ok'),
        ],
      },
    },
  });
  await stack.client.result(old, started.turnIndex);
  const pool = stack.db.pool;
  assert.ok((await countBlocks(pool, old)) > 0);
  assert.ok((await readEvents(pool, old, 0)).length > 0);

  // Everything before "now + 1 minute" counts as inactive for this run; a dry run lists without purging.
  const now = new Date(Date.now() + 60_000);
  const dry = await collectGarbage(stack.client.temporal, stack.db, {
    inactiveDays: 0,
    now,
    dryRun: true,
    taskQueue: stack.taskQueue,
  });
  assert.ok(dry.candidates.includes(old));
  assert.ok((await countBlocks(pool, old)) > 0, 'a dry run purges nothing');

  const run = await collectGarbage(stack.client.temporal, stack.db, {
    inactiveDays: 0,
    now,
    taskQueue: stack.taskQueue,
  });
  const mine = run.purged.find((p) => p.conversationId === old);
  assert.ok(mine, 'the conversation was purged');
  assert.equal(mine.cancelled, true, 'its conversation workflow was still open and was stopped');
  assert.ok(mine.removed.timeline_blocks > 0 && mine.removed.turns === 1 && mine.removed.conversations === 1);
  assert.ok(mine.removed.usage_ledger > 0 && mine.removed.stream_events > 0 && mine.removed.artifacts > 0);

  assert.equal(await countBlocks(pool, old), 0);
  assert.deepEqual(await listTurns(pool, old), []);
  assert.deepEqual(await readEvents(pool, old, 0), []);
  assert.equal((await loadConversation(pool, old)) ?? null, null);
  assert.ok(!(await usageRows(pool)).some((r) => r.callKey.includes(old)));
  const desc = await stack.client.temporal.workflow.getHandle(`conv/${old}`).describe();
  assert.notEqual(desc.status.name, 'RUNNING');
  const purge = await stack.client.temporal.workflow.getHandle(`purge/${old}`).describe();
  assert.equal(purge.status.name, 'COMPLETED');

  const again = await collectGarbage(stack.client.temporal, stack.db, {
    inactiveDays: 0,
    now,
    taskQueue: stack.taskQueue,
  });
  assert.ok(!again.candidates.includes(old), 'nothing left to purge');
  // A recent conversation is kept by a real retention window.
  const kept = await collectGarbage(stack.client.temporal, stack.db, {
    inactiveDays: 30,
    dryRun: true,
    taskQueue: stack.taskQueue,
  });
  assert.deepEqual(kept.candidates, []);
});
