/**
 * Schedules declared in an agent file (`schedules:`), reconciled at each worker start on a real
 * dev server and Postgres: the first start adds them (Temporal Schedules marked managed in their
 * memo), a start after the file changed updates the changed one, adds the new one and deletes the
 * one no longer declared, a start with none left deletes the rest — and a schedule a user made
 * stays untouched throughout. A bad cron in the file stops the start naming the file and field.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleNotFoundError } from '@temporalio/client';
import { createTestStack, type TestStack } from '../support/stack';
import { managedSchedules, loadSchedule } from '../../store/schedules/schedule-store';
import { ScheduleService } from '../../client/schedules/service';
import { LOCAL_PRINCIPAL } from '../../core/tenancy/principal';

let stack: TestStack;
let dir: string;

before(async () => {
  stack = await createTestStack('schedagents');
  dir = mkdtempSync(join(tmpdir(), 'dreact-sched-agents-'));
});
after(async () => {
  await stack?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const agentFile = (schedules: string) =>
  writeFileSync(join(dir, 'reporter.yaml'), `name: reporter\ninstructions: Write reports.\n${schedules}`);

async function restart(): Promise<void> {
  await stack.stopWorker();
  await stack.startWorker({ agents: { dir } });
}

const idOf = (name: string) => `agent.reporter.${name}@${stack.taskQueue}`;

test('agent-file schedules are added, changed and removed across worker starts; user schedules are untouched', async () => {
  const temporal = stack.server.env.client;
  const user = await new ScheduleService(temporal, stack.db.pool, stack.taskQueue).create(LOCAL_PRINCIPAL, {
    agent: 'default',
    cron: '0 0 1 1 *',
    prompt: 'mine',
  });
  agentFile(`schedules:
  - name: morning
    cron: "0 7 * * 1-5"
    timezone: Europe/Lisbon
    prompt: Summarise yesterday's tickets
  - name: hourly
    every: 1h
    paused: true
    prompt: Check the queue
    conversation: queue-watch
`);
  await restart();
  const first = (await managedSchedules(stack.db.pool, stack.taskQueue)).map((r) => r.id);
  assert.deepEqual(first, [idOf('hourly'), idOf('morning')]);
  const morning = await temporal.schedule.getHandle(idOf('morning')).describe();
  assert.deepEqual(morning.memo?.dreact, {
    owner: { tenantId: 'local', projectId: 'default', userId: null },
    managedBy: 'agent-file',
  });
  assert.equal(morning.spec.timezone, 'Europe/Lisbon');
  const hourly = await temporal.schedule.getHandle(idOf('hourly')).describe();
  assert.equal(hourly.state.paused, true);
  assert.equal((await loadSchedule(stack.db.pool, idOf('hourly')))?.conversationId, 'queue-watch');

  // The same file again: nothing changes (no update, same schedules).
  await restart();
  const again = await temporal.schedule.getHandle(idOf('morning')).describe();
  assert.equal(again.info.lastUpdatedAt?.getTime(), morning.info.lastUpdatedAt?.getTime(), 'unchanged: not updated');

  agentFile(`schedules:
  - name: morning
    cron: "0 8 * * 1-5"
    timezone: Europe/Lisbon
    prompt: Summarise yesterday's tickets and PRs
  - name: weekly
    cron: "0 9 * * MON"
    prompt: The week ahead
`);
  await restart();
  assert.deepEqual(
    (await managedSchedules(stack.db.pool, stack.taskQueue)).map((r) => r.id),
    [idOf('morning'), idOf('weekly')],
  );
  const changed = await temporal.schedule.getHandle(idOf('morning')).describe();
  assert.equal(changed.action.type, 'startWorkflow');
  const args = (changed.action as { args?: Array<{ prompt: string }> }).args;
  assert.equal(args?.[0]?.prompt, "Summarise yesterday's tickets and PRs");
  assert.equal((await loadSchedule(stack.db.pool, idOf('morning')))?.definition.cron, '0 8 * * 1-5');
  await assert.rejects(temporal.schedule.getHandle(idOf('hourly')).describe(), ScheduleNotFoundError);

  agentFile('');
  await restart();
  assert.deepEqual(await managedSchedules(stack.db.pool, stack.taskQueue), []);
  await assert.rejects(temporal.schedule.getHandle(idOf('morning')).describe(), ScheduleNotFoundError);
  // The user's schedule is still there.
  assert.ok(await temporal.schedule.getHandle(user.id).describe());
  assert.ok(await loadSchedule(stack.db.pool, user.id));
  await temporal.schedule.getHandle(user.id).delete();
});

test('a bad cron in an agent file stops the start naming the file and the field', async () => {
  agentFile(`schedules:
  - name: broken
    cron: "0 25 * * *"
    prompt: never
`);
  await stack.stopWorker();
  await assert.rejects(stack.startWorker({ agents: { dir } }), (err: Error) => {
    assert.match(err.message, /reporter\.yaml/);
    assert.match(err.message, /schedules\[0\]\.cron: the hour field "25"/);
    return true;
  });
});
