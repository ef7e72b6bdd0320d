/**
 * Scheduled agents (issue 44, item 1): what a schedule is — an agent, a prompt, when it runs (a
 * cron expression in a time zone, or a fixed interval), which conversation its runs go to, its
 * overlap policy, catch-up window, jitter, spend cap and optional webhook. The one zod schema of a
 * schedule as the CLI, the gateway and an agent file's `schedules:` give it; the Temporal Schedule
 * is built from it (client/schedules/options.ts). Pure.
 *
 * Durations are written `500ms`, `30s`, `5m`, `2h`, `1d` or combined (`1h30m`). A cron expression
 * has five fields (minute hour day-of-month month day-of-week), each `*`, a number, a range, a list
 * or a step (`*\/15`, `1-5`, `MON-FRI`), or is one of `@hourly @daily @weekly @monthly @yearly`.
 */
import { z } from 'zod';
import { AGENT_NAME_RE } from '../agents/ref';
import { ClientConversationIdSchema } from '../tenancy/conversation-space';

export const OVERLAP_POLICIES = ['skip', 'buffer-one', 'cancel'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Temporal's overlap policy of each (ScheduleOverlapPolicy: cancel = CANCEL_OTHER, the running run is cancelled). */
export const TEMPORAL_OVERLAP: Record<OverlapPolicy, 'SKIP' | 'BUFFER_ONE' | 'CANCEL_OTHER'> = {
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  cancel: 'CANCEL_OTHER',
};

/** The shortest interval a schedule may run at. */
export const MIN_EVERY_MS = 1_000;
const MAX_DURATION_MS = 366 * 24 * 3600 * 1000;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration in milliseconds, or an error message naming `flag` (e.g. `--every: "30x" is not a
 * duration — write 30s, 5m, 2h, 1d or 1h30m`).
 */
export function parseDuration(raw: string, flag: string, minMs = 0): number {
  const text = raw.trim();
  const bad = () =>
    new Error(`${flag}: ${JSON.stringify(raw)} is not a duration — write e.g. 30s, 5m, 2h, 1d or 1h30m`);
  if (!/^(\d+(ms|s|m|h|d))+$/.test(text)) throw bad();
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)(ms|s|m|h|d)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  if (ms < minMs)
    throw new Error(`${flag}: ${JSON.stringify(raw)} is shorter than ${minMs / 1000} s, the least allowed`);
  if (ms > MAX_DURATION_MS) throw new Error(`${flag}: ${JSON.stringify(raw)} is longer than 366 days`);
  return ms;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const CRON_FIELDS: Array<{ name: string; min: number; max: number; names?: string[]; base?: number }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
];
const CRON_MACROS = ['@hourly', '@daily', '@midnight', '@weekly', '@monthly', '@yearly', '@annually'];

/** Checks a cron expression; throws an error naming `flag`, the field and what is wrong. */
export function checkCron(expr: string, flag = '--cron'): string {
  const text = expr.trim().replace(/\s+/g, ' ');
  if (CRON_MACROS.includes(text)) return text;
  const parts = text.split(' ');
  if (parts.length !== 5)
    throw new Error(
      `${flag}: ${JSON.stringify(expr)} has ${parts.length} field(s); a cron expression has 5 (minute hour day-of-month month day-of-week), e.g. "0 7 * * 1-5"`,
    );
  parts.forEach((part, i) => {
    const f = CRON_FIELDS[i]!;
    const value = (v: string): number => {
      const named = f.names?.indexOf(v.toUpperCase()) ?? -1;
      const n = named >= 0 ? named + f.base! : /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isInteger(n) || n < f.min || n > f.max)
        throw new Error(
          `${flag}: the ${f.name} field "${part}" — ${JSON.stringify(v)} is not from ${f.min} to ${f.max}`,
        );
      return n;
    };
    for (const item of part.split(',')) {
      const [range, step, extra] = item.split('/');
      if (extra !== undefined || range === '' || (step !== undefined && !/^[1-9]\d*$/.test(step)))
        throw new Error(`${flag}: the ${f.name} field "${part}" is not a number, range, list or step`);
      if (range === '*') continue;
      const [lo, hi, more] = range!.split('-');
      if (more !== undefined) throw new Error(`${flag}: the ${f.name} field "${part}" has a bad range`);
      const a = value(lo!);
      if (hi !== undefined && value(hi) < a)
        throw new Error(`${flag}: the ${f.name} field "${part}" has a range that ends before it starts`);
    }
  });
  return text;
}

/** Checks an IANA time zone name (e.g. Europe/Lisbon); throws an error naming `flag`. */
export function checkTimezone(tz: string, flag = '--timezone'): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    throw new Error(`${flag}: ${JSON.stringify(tz)} is not an IANA time zone (e.g. Europe/Lisbon, UTC)`);
  }
  return tz;
}

export const refineBy =
  (check: (v: string, flag: string) => unknown, flag: string) => (v: string, ctx: z.RefinementCtx) => {
    try {
      check(v, flag);
    } catch (err) {
      // The issue's path names the field: the message without the flag's name in front.
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(`${flag}: `, '') });
    }
  };

/** A duration field (`30s`, `5m`) of at least `minMs`. */
const durationField = (flag: string, minMs = 0) =>
  z.string().superRefine(refineBy((v, f) => parseDuration(v, f, minMs), flag));

/** Schedule ids: made by the runtime (`sch_…`) or from an agent file (`agent.<agent>.<name>@<queue>`). */
export const ScheduleIdSchema = z
  .string()
  .min(1)
  .max(300)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@:-]*$/, 'a schedule id uses letters, digits, _ . @ : -');

/** The webhook a run's answer is POSTed to (signed; the URL checked like web_fetch's). */
export const WebhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'webhook url: an http(s) URL' }).max(2_000),
});

export const ScheduleInputSchema = z
  .strictObject({
    agent: z.string().regex(AGENT_NAME_RE, 'agent: a lowercase agent name'),
    prompt: z.string().trim().min(1, 'prompt is empty').max(20_000, 'prompt is too long (20 000 characters at most)'),
    cron: z.string().superRefine(refineBy(checkCron, 'cron')).optional(),
    timezone: z.string().superRefine(refineBy(checkTimezone, 'timezone')).optional(),
    every: durationField('every', MIN_EVERY_MS).optional(),
    /** The conversation every run goes to (as the owner names it); absent: a new one each run. */
    conversation: ClientConversationIdSchema.optional(),
    overlap: z.enum(OVERLAP_POLICIES).default('skip'),
    catchupWindow: durationField('catchupWindow', 10_000).optional(),
    jitter: durationField('jitter').optional(),
    /** The schedule's own cap: a run starts only while its runs spent less than this today (UTC). */
    maxUsdPerDay: z.number().min(0).max(1_000_000).optional(),
    webhook: WebhookSchema.optional(),
    paused: z.boolean().default(false),
    note: z.string().max(500).optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.cron === undefined) === (s.every === undefined))
      ctx.addIssue({ code: 'custom', path: ['cron'], message: 'give either cron or every (exactly one)' });
    if (s.timezone !== undefined && s.cron === undefined)
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'timezone applies to a cron schedule only' });
  });
export type ScheduleInput = z.output<typeof ScheduleInputSchema>;
export type ScheduleInputRaw = z.input<typeof ScheduleInputSchema>;

/** When a schedule runs, in words (`every 30s`, `0 7 * * 1-5 (Europe/Lisbon)`). */
export function describeWhen(s: Pick<ScheduleInput, 'cron' | 'every' | 'timezone'>): string {
  if (s.every !== undefined) return `every ${s.every}`;
  return `${s.cron} (${s.timezone ?? 'UTC'})`;
}

/** The outcomes of a run (schedule_runs.outcome). */
export const RUN_OUTCOMES = ['running', 'completed', 'failed', 'cancelled', 'refused'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];
