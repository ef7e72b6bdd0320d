/**
 * `dreact schedules …` through the real CLI process (test/support/dreact-cli.ts) against a test
 * stack: create (`--json` prints `{ "id" }`; a bad --every / --cron is refused naming the flag,
 * nothing written), list, describe, pause, unpause, trigger (the run's turn and outcome in
 * describe), backfill and delete.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { scriptedAnswer } from '../support/schedule-kit';
import { listRuns } from '../../store/schedules/run-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('clisched');
  await stack.startWorker({
    defaultModel: scriptedAnswer('done'),
  });
});
after(async () => {
  await stack?.teardown();
});

const dreact = (...args: string[]) => runDreact(['schedules', ...args], { env: stackCliEnv(stack) });

test('dreact schedules: every command, --json, and flag errors', async () => {
  const badEvery = await dreact('create', '--agent', 'default', '--every', '30x', 'hi');
  assert.notEqual(badEvery.code, 0);
  assert.match(badEvery.stderr, /--every: "30x" is not a duration/);
  const badCron = await dreact('create', '--agent', 'default', '--cron', '0 7 * *', 'hi');
  assert.match(badCron.stderr, /--cron: "0 7 \* \*" has 4 field\(s\)/);
  assert.equal((await stack.db.pool.query('SELECT 1 FROM schedules')).rowCount, 0);

  const created = await dreact(
    'create',
    '--agent',
    'default',
    '--cron',
    '0 7 * * 1-5',
    '--timezone',
    'Europe/Lisbon',
    '--overlap',
    'buffer-one',
    '--json',
    'Summarise',
  );
  assert.equal(created.code, 0, created.stderr);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const list = JSON.parse((await dreact('list', '--json')).stdout) as {
    schedules: Array<{ id: string; when: string }>;
  };
  assert.deepEqual(
    list.schedules.map((s) => [s.id, s.when]),
    [[id, '0 7 * * 1-5 (Europe/Lisbon)']],
  );
  const described = JSON.parse((await dreact('describe', id, '--json')).stdout) as {
    nextRuns: string[];
    overlap: string;
  };
  assert.equal(described.overlap, 'buffer-one');
  assert.ok(described.nextRuns.length > 0);

  assert.equal((await dreact('pause', id)).stdout.trim(), `schedule ${id} paused`);
  assert.match((await dreact('describe', id)).stdout, /overlap buffer-one, paused/);
  assert.deepEqual(JSON.parse((await dreact('unpause', id, '--json')).stdout), { id, done: 'unpaused' });

  assert.equal((await dreact('trigger', id)).code, 0);
  await waitFor(
    'the triggered run completed',
    async () => (await listRuns(stack.db.pool, id))[0]?.outcome === 'completed',
    60_000,
    200,
  );
  assert.match((await dreact('describe', id)).stdout, /completed {2}sched\.\S+ turn 1 complete/);

  const backfill = await dreact('backfill', id, '--from', '2026-01-05T00:00:00Z', '--to', '2026-01-07T00:00:00Z');
  assert.equal(backfill.code, 0, backfill.stderr);
  await waitFor('the backfilled runs', async () => (await listRuns(stack.db.pool, id)).length === 3, 60_000, 200);
  const runs = (
    JSON.parse((await dreact('describe', id, '--json')).stdout) as { runs: Array<{ runWorkflowId: string }> }
  ).runs;
  assert.equal(
    runs.filter((r) => /2026-01-0[56]T07:00:00Z$/.test(r.runWorkflowId)).length,
    2,
    "the window's two weekday runs",
  );
  const badTime = await dreact('backfill', id, '--from', 'soon', '--to', '2026-01-07T00:00:00Z');
  assert.match(badTime.stderr, /--from: "soon" is not a date-time/);

  assert.equal((await dreact('delete', id)).stdout.trim(), `schedule ${id} deleted`);
  const gone = await dreact('describe', id);
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /no schedule/);
});
