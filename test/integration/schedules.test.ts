/**
 * Scheduled agents on Temporal Schedules (issue 44, item 1), on a real dev server, Postgres and
 * worker with a scripted model whose turns take a few seconds: a schedule every second fires real
 * turns (each a new conversation, its run and the run's ScheduleId search attribute in Temporal),
 * skips while a run is in progress (overlap skip), stops when paused, runs once when triggered;
 * backfill takes the window's runs; a cap refuses a run (recorded as refused, the run completes,
 * nothing retried); the answer goes to a signed webhook, and a loopback webhook is refused by
 * web_fetch's guard unless private addresses are allowed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { scriptedAnswer } from '../support/schedule-kit';
import { ScheduleService } from '../../client/schedules/service';
import { LOCAL_PRINCIPAL } from '../../core/tenancy/principal';
import { listRuns } from '../../store/schedules/run-store';
import { ScheduleIdKey } from '../../contract/definitions';
import { setBudget, deleteBudget } from '../../store/budget-store';
import { HOOK_PRESETS } from '../../core/hooks/presets';
import { verifySignature } from '../../core/hooks/signature';
import { hmacSha256Hex } from '../../store/hooks/hook-store';

let stack: TestStack;
let schedules: ScheduleService;

before(async () => {
  stack = await createTestStack('sched');
  await stack.startWorker({
    // Each turn takes ~2 s (the title call and the answer round): longer than the 1 s interval.
    defaultModel: scriptedAnswer('report ready', 1_000),
  });
  schedules = new ScheduleService(stack.server.env.client, stack.db.pool, stack.taskQueue);
});
after(async () => {
  await stack?.teardown();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('every 1s: real turns, overlap skip, pause stops it, trigger runs one now', async () => {
  const { id } = await schedules.create(LOCAL_PRINCIPAL, {
    agent: 'default',
    every: '1s',
    prompt: 'Summarise yesterday',
  });
  try {
    const done = await waitFor(
      'two completed runs',
      async () => {
        const runs = (await listRuns(stack.db.pool, id)).filter((r) => r.outcome === 'completed');
        const d = await schedules.describe(LOCAL_PRINCIPAL, id);
        assert.ok(d.running.length <= 1, `overlap skip: at most one run at a time (${d.running.join(', ')})`);
        return runs.length >= 2 ? runs : undefined;
      },
      30_000,
      200,
    );
    // Each run is a new conversation whose turn answered; the run carries ScheduleId.
    assert.notEqual(done[0]!.conversationId, done[1]!.conversationId);
    for (const run of done.slice(0, 2)) {
      const result = await stack.client.result(run.conversationId!, run.turnIndex!);
      assert.equal(result.answer, 'report ready');
      const desc = await stack.server.env.client.workflow.getHandle(run.runWorkflowId).describe();
      assert.equal(desc.typedSearchAttributes.get(ScheduleIdKey), id);
      assert.equal(desc.type, 'ScheduledTurnWorkflow');
    }
    const d = await schedules.describe(LOCAL_PRINCIPAL, id);
    assert.ok(d.skippedOverlap > 0, 'runs due while one ran were skipped');
    assert.ok(d.nextRuns.length > 0);
    assert.equal(d.runs[0]!.scheduleId, id);

    await schedules.pause(LOCAL_PRINCIPAL, id, 'quiet');
    await waitFor(
      'no run in progress',
      async () => (await schedules.describe(LOCAL_PRINCIPAL, id)).running.length === 0,
      30_000,
      200,
    );
    const paused = await schedules.describe(LOCAL_PRINCIPAL, id);
    assert.equal(paused.paused, true);
    await sleep(2_500);
    assert.equal(
      (await schedules.describe(LOCAL_PRINCIPAL, id)).actionsTaken,
      paused.actionsTaken,
      'paused: no new run',
    );

    await schedules.trigger(LOCAL_PRINCIPAL, id);
    await waitFor(
      'the triggered run',
      async () => (await schedules.describe(LOCAL_PRINCIPAL, id)).actionsTaken === paused.actionsTaken + 1,
      20_000,
      200,
    );
  } finally {
    await schedules.delete(LOCAL_PRINCIPAL, id);
  }
  await assert.rejects(schedules.describe(LOCAL_PRINCIPAL, id), /no schedule/);
});

test('backfill takes the runs of the window, each once, into one conversation', async () => {
  const { id } = await schedules.create(LOCAL_PRINCIPAL, {
    agent: 'default',
    cron: '0 0 1 1 *',
    timezone: 'UTC',
    conversation: 'yearly-report',
    prompt: 'Year in review',
  });
  try {
    await schedules.backfill(LOCAL_PRINCIPAL, id, new Date('2023-01-01T00:00:00Z'), new Date('2025-06-01T00:00:00Z'));
    const runs = await waitFor(
      'three backfilled runs done',
      async () => {
        const rows = await listRuns(stack.db.pool, id);
        return rows.length === 3 && rows.every((r) => r.outcome === 'completed') ? rows : undefined;
      },
      60_000,
      200,
    );
    assert.deepEqual(runs.map((r) => r.runWorkflowId.slice(-20)).sort(), [
      '2023-01-01T00:00:00Z',
      '2024-01-01T00:00:00Z',
      '2025-01-01T00:00:00Z',
    ]);
    assert.ok(runs.every((r) => r.conversationId === 'yearly-report'));
    assert.deepEqual(runs.map((r) => r.turnIndex).sort(), [1, 2, 3], 'three turns of the one conversation');
  } finally {
    await schedules.delete(LOCAL_PRINCIPAL, id);
  }
});

test('a cap refuses a run: recorded as refused, the run ends, no turn starts', async () => {
  const own = await schedules.create(LOCAL_PRINCIPAL, {
    agent: 'default',
    cron: '0 0 1 1 *',
    prompt: 'Expensive',
    maxUsdPerDay: 0,
  });
  const tenant = await schedules.create(LOCAL_PRINCIPAL, { agent: 'default', cron: '0 0 1 1 *', prompt: 'Also' });
  const budget = { tenantId: 'local', scope: 'tenant' as const, scopeId: '', period: 'day' as const };
  await setBudget(stack.db.pool, { ...budget, capUsd: 0 });
  try {
    await schedules.trigger(LOCAL_PRINCIPAL, own.id);
    await schedules.trigger(LOCAL_PRINCIPAL, tenant.id);
    for (const [id, reason] of [
      [own.id, /schedule .* cap: its runs spent 0\.0000 of 0\.0000 USD today/],
      [tenant.id, /tenant local, per day: spent/],
    ] as const) {
      const [run] = await waitFor('the refused run', async () => {
        const rows = await listRuns(stack.db.pool, id);
        return rows.length === 1 && rows[0]!.outcome === 'refused' ? rows : undefined;
      });
      assert.match(run!.refusedReason ?? '', reason);
      assert.equal(run!.turnIndex, null, 'no turn started');
      const handle = stack.server.env.client.workflow.getHandle(run!.runWorkflowId);
      assert.equal((await handle.result()).outcome, 'refused', 'the run completed (not retried)');
      const conv = await stack.db.pool.query(`SELECT 1 FROM conversations WHERE id = $1`, [run!.conversationId]);
      assert.equal(conv.rowCount, 0, 'no conversation claimed');
    }
  } finally {
    await deleteBudget(stack.db.pool, budget);
    await schedules.delete(LOCAL_PRINCIPAL, own.id);
    await schedules.delete(LOCAL_PRINCIPAL, tenant.id);
  }
});

test('the answer is POSTed to the webhook, signed; a loopback URL is refused unless private addresses are allowed', async () => {
  const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const created = await schedules.create(LOCAL_PRINCIPAL, {
    agent: 'default',
    cron: '0 0 1 1 *',
    prompt: 'Hook me',
    webhook: { url },
  });
  try {
    assert.ok(created.webhookSecret, 'the secret is shown at create');
    await schedules.trigger(LOCAL_PRINCIPAL, created.id);
    const refused = await waitFor('the refused delivery', async () => {
      const [r] = await listRuns(stack.db.pool, created.id);
      return r?.delivery ? r : undefined;
    });
    assert.match(refused.delivery!, /^refused: .*loopback/);
    assert.equal(received.length, 0, 'nothing was sent');

    process.env.DREACT_WEB_ALLOW_PRIVATE = '1';
    await schedules.trigger(LOCAL_PRINCIPAL, created.id);
    await waitFor('the delivery', async () => received.length === 1);
    const got = received[0]!;
    const payload = JSON.parse(got.body) as { answer: string; scheduleId: string; outcome: string };
    assert.equal(payload.answer, 'report ready');
    assert.equal(payload.scheduleId, created.id);
    // One signing format for outgoing deliveries and incoming hooks: the dreact scheme's t=…,v1=….
    assert.match(String(got.headers['x-dreact-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.match(
      String(got.headers['x-dreact-delivery']),
      new RegExp(`^sched\\.${created.id}-`),
      'the run is the delivery id',
    );
    const verify = (secret: string) =>
      verifySignature(
        HOOK_PRESETS.dreact,
        secret,
        { headers: (name) => got.headers[name] as string | undefined, body: got.body },
        Date.now(),
        hmacSha256Hex,
      ).ok;
    assert.ok(verify(created.webhookSecret!), 'the signature verifies with the secret');
    assert.ok(!verify('wrong-secret-0123456789'));
    await waitFor('delivery recorded', async () =>
      (await listRuns(stack.db.pool, created.id)).some((r) => r.delivery === 'delivered: 200'),
    );
  } finally {
    delete process.env.DREACT_WEB_ALLOW_PRIVATE;
    server.close();
    await schedules.delete(LOCAL_PRINCIPAL, created.id);
  }
});
