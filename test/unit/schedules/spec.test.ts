/** Parsing of schedules (core/schedules/spec.ts, agent-schedules.ts, run.ts) and the CLI's flags: every error names its flag or field. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCron, checkTimezone, parseDuration, ScheduleInputSchema } from '../../../core/schedules/spec';
import { AgentScheduleSchema, agentScheduleId, agentScheduleInput } from '../../../core/schedules/agent-schedules';
import { runConversationId, runMessageId } from '../../../core/schedules/run';
import { scheduleFromFlags } from '../../../apps/cli/schedules-command';
import { formatZodError } from '../../../core/validation';

test('--every durations: units, combinations, the least interval, errors naming the flag', () => {
  assert.equal(parseDuration('30s', '--every'), 30_000);
  assert.equal(parseDuration('1h30m', '--every'), 5_400_000);
  assert.equal(parseDuration('2d', '--every'), 172_800_000);
  assert.equal(parseDuration('500ms', '--jitter'), 500);
  assert.throws(() => parseDuration('30x', '--every'), /^Error: --every: "30x" is not a duration — write e\.g\. 30s/);
  assert.throws(() => parseDuration('', '--every'), /--every: "" is not a duration/);
  assert.throws(() => parseDuration('-5s', '--every'), /--every: "-5s" is not a duration/);
  assert.throws(() => parseDuration('500ms', '--every', 1_000), /--every: "500ms" is shorter than 1 s/);
  assert.throws(() => parseDuration('400d', '--every'), /--every: "400d" is longer than 366 days/);
});

test('cron expressions: fields, ranges, steps, names and macros; errors name the flag and the field', () => {
  assert.equal(checkCron('0 7 * * 1-5'), '0 7 * * 1-5');
  assert.equal(checkCron('*/15  9-17 * JAN-MAR mon,fri'), '*/15 9-17 * JAN-MAR mon,fri');
  assert.equal(checkCron('@daily'), '@daily');
  assert.throws(() => checkCron('0 7 * *'), /^Error: --cron: "0 7 \* \*" has 4 field\(s\); a cron expression has 5/);
  assert.throws(() => checkCron('0 24 * * *'), /--cron: the hour field "24" — "24" is not from 0 to 23/);
  assert.throws(() => checkCron('61 * * * *'), /--cron: the minute field "61"/);
  assert.throws(() => checkCron('0 0 0 * *'), /the day of month field "0" — "0" is not from 1 to 31/);
  assert.throws(() => checkCron('0 0 * 13 *'), /the month field "13"/);
  assert.throws(() => checkCron('0 0 * * FUNDAY'), /the day of week field "FUNDAY"/);
  assert.throws(() => checkCron('*/0 * * * *'), /the minute field "\*\/0" is not a number, range, list or step/);
  assert.throws(() => checkCron('0 5-3 * * *'), /the hour field "5-3" has a range that ends before it starts/);
});

test('time zones are IANA names', () => {
  assert.equal(checkTimezone('Europe/Lisbon'), 'Europe/Lisbon');
  assert.throws(() => checkTimezone('Mars/Olympus'), /^Error: --timezone: "Mars\/Olympus" is not an IANA time zone/);
});

test('a schedule: exactly one of cron and every; timezone with cron only; defaults', () => {
  const ok = ScheduleInputSchema.parse({ agent: 'default', prompt: 'hi', every: '30s' });
  assert.equal(ok.overlap, 'skip');
  assert.equal(ok.paused, false);
  const issues = (raw: unknown) => {
    const r = ScheduleInputSchema.safeParse(raw);
    assert.ok(!r.success);
    return formatZodError(r.error);
  };
  assert.match(issues({ agent: 'default', prompt: 'hi' }), /cron: give either cron or every/);
  assert.match(
    issues({ agent: 'default', prompt: 'hi', every: '1s', cron: '* * * * *' }),
    /cron: give either cron or every/,
  );
  assert.match(
    issues({ agent: 'default', prompt: 'hi', every: '1s', timezone: 'UTC' }),
    /timezone: timezone applies to a cron schedule only/,
  );
  assert.match(issues({ agent: 'default', prompt: 'hi', cron: '0 99 * * *' }), /cron: the hour field "99"/);
  assert.match(issues({ agent: 'default', prompt: 'hi', every: '100ms' }), /every: "100ms" is shorter than 1 s/);
  assert.match(issues({ agent: 'default', prompt: 'hi', every: '1m', webhook: { url: 'ftp://x' } }), /webhook\.url/);
  assert.match(issues({ agent: 'default', prompt: '  ', every: '1m' }), /prompt: prompt is empty/);
  assert.match(issues({ agent: 'default', prompt: 'x', every: '1m', colour: 'red' }), /colour/);
});

test("an agent file's schedule: snake_case fields, errors under the file's field names, its id", () => {
  const s = AgentScheduleSchema.parse({
    name: 'morning',
    cron: '0 7 * * 1-5',
    prompt: 'go',
    max_usd_per_day: 2,
    catchup_window: '5m',
  });
  const input = agentScheduleInput('reporter', s);
  assert.equal(input.maxUsdPerDay, 2);
  assert.equal(input.catchupWindow, '5m');
  assert.equal(input.agent, 'reporter');
  const bad = AgentScheduleSchema.safeParse({ name: 'x', every: '1m', prompt: 'go', catchup_window: '1s' });
  assert.ok(!bad.success);
  assert.match(formatZodError(bad.error), /catchup_window: "1s" is shorter than 10 s/);
  assert.equal(agentScheduleId('reporter', 'morning', 'q'), 'agent.reporter.morning@q');
});

test("a run's conversation and message id derive from its workflow id (stable across retries)", () => {
  const owner = { tenantId: 'acme', projectId: 'p', userId: 'ann' };
  const wf = 'sched.sch_1-2026-01-01T00:00:00Z';
  assert.equal(runConversationId({ owner }, wf), 'acme~p~ann~sched.sch_1-2026-01-01T00:00:00Z');
  assert.equal(runConversationId({ owner: { tenantId: 'local', projectId: 'default', userId: null } }, wf), wf);
  assert.equal(runConversationId({ owner, conversationId: 'fixed' }, wf), 'fixed');
  assert.equal(runMessageId(wf), `msg_${wf}`);
  const long = `sched.${'a'.repeat(250)}-2026-01-01T00:00:00Z`;
  assert.equal(runMessageId(long).length, 200);
  assert.ok(runMessageId(long).endsWith('2026-01-01T00:00:00Z'), 'a long id keeps its scheduled time');
});

test('CLI flags: one of --cron / --every, --timezone with --cron, one conversation mode', () => {
  assert.throws(() => scheduleFromFlags('p', { agent: 'a' }), /give --cron "<expression>" or --every <duration>/);
  assert.throws(
    () => scheduleFromFlags('p', { agent: 'a', every: '1m', timezone: 'UTC' }),
    /--timezone: applies to a --cron schedule only/,
  );
  assert.throws(
    () => scheduleFromFlags('p', { agent: 'a', every: '1m', conversation: 'c', newConversationEachRun: true }),
    /--conversation and --new-conversation-each-run/,
  );
  assert.deepEqual(
    scheduleFromFlags('p', {
      agent: 'a',
      cron: '0 7 * * 1-5',
      timezone: 'Europe/Lisbon',
      webhook: 'https://x.example/h',
    }),
    {
      agent: 'a',
      prompt: 'p',
      cron: '0 7 * * 1-5',
      timezone: 'Europe/Lisbon',
      webhook: { url: 'https://x.example/h' },
    },
  );
});
