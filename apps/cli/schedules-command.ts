/**
 * `dreact schedules create|list|describe|pause|unpause|trigger|backfill|delete` — scheduled agents
 * on Temporal Schedules (docs/schedules.md, client/schedules/service.ts), as the local operator
 * (the local tenant). `--json` on each; `create --json` prints `{ "id": … }` (and the webhook
 * secret when there is a webhook). Bad flags are refused naming the flag, before anything is written.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { TASK_QUEUE } from '../../core/turn/contracts';
import { LOCAL_PRINCIPAL } from '../../core/tenancy/principal';
import {
  checkCron,
  checkTimezone,
  MIN_EVERY_MS,
  OVERLAP_POLICIES,
  parseDuration,
  type OverlapPolicy,
  type ScheduleInputRaw,
} from '../../core/schedules/spec';
import type { ScheduleService } from '../../client/schedules/service';
import type { Session } from './session';
import { withSession } from './with-session';

const arg =
  (flag: string, check: (v: string, flag: string) => unknown) =>
  (v: string): string => {
    try {
      check(v, flag);
      return v;
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };

const usd = (v: string) => {
  const n = Number(v);
  if (!(v.trim() !== '' && Number.isFinite(n) && n >= 0))
    throw new InvalidArgumentError(`--max-usd-per-day: a non-negative amount in USD, got "${v}"`);
  return n;
};

const time = (flag: string) => (v: string) => {
  const d = new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new InvalidArgumentError(`${flag}: "${v}" is not a date-time (e.g. 2026-01-01T00:00:00Z)`);
  return d;
};

const overlap = (v: string): OverlapPolicy => {
  if (!(OVERLAP_POLICIES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`--overlap: one of ${OVERLAP_POLICIES.join(', ')}, got "${v}"`);
  return v as OverlapPolicy;
};

interface CreateFlags {
  agent: string;
  cron?: string;
  timezone?: string;
  every?: string;
  conversation?: string;
  newConversationEachRun?: boolean;
  overlap?: OverlapPolicy;
  catchupWindow?: string;
  jitter?: string;
  maxUsdPerDay?: number;
  webhook?: string;
  paused?: boolean;
  json?: boolean;
}

/** The schedule the flags describe; a missing or conflicting flag is refused naming it. */
export function scheduleFromFlags(prompt: string, o: CreateFlags): ScheduleInputRaw {
  if ((o.cron === undefined) === (o.every === undefined))
    throw new InvalidArgumentError('give --cron "<expression>" or --every <duration> (exactly one)');
  if (o.timezone !== undefined && o.cron === undefined)
    throw new InvalidArgumentError('--timezone: applies to a --cron schedule only');
  if (o.conversation !== undefined && o.newConversationEachRun)
    throw new InvalidArgumentError('--conversation and --new-conversation-each-run: give one of them');
  return {
    agent: o.agent,
    prompt,
    ...(o.cron !== undefined ? { cron: o.cron } : {}),
    ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
    ...(o.every !== undefined ? { every: o.every } : {}),
    ...(o.conversation !== undefined ? { conversation: o.conversation } : {}),
    ...(o.overlap !== undefined ? { overlap: o.overlap } : {}),
    ...(o.catchupWindow !== undefined ? { catchupWindow: o.catchupWindow } : {}),
    ...(o.jitter !== undefined ? { jitter: o.jitter } : {}),
    ...(o.maxUsdPerDay !== undefined ? { maxUsdPerDay: o.maxUsdPerDay } : {}),
    ...(o.webhook !== undefined ? { webhook: { url: o.webhook } } : {}),
    ...(o.paused ? { paused: true } : {}),
  };
}

async function withSchedules<T>(fn: (svc: ScheduleService, s: Session) => Promise<T>): Promise<T> {
  return withSession(async (s) => {
    const { ScheduleService } =
      require('../../client/schedules/service') as typeof import('../../client/schedules/service');
    return fn(new ScheduleService(s.temporal, s.db.pool, s.api.opts.taskQueue ?? TASK_QUEUE), s);
  });
}

const print = (json: boolean | undefined, value: unknown, text: () => string) =>
  console.log(json ? JSON.stringify(value, null, 2) : text());

export function registerScheduleCommands(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('scheduled agents: turns a Temporal Schedule starts (cron or interval), docs/schedules.md');
  schedules
    .command('create')
    .description('create a schedule that runs a turn of an agent with this prompt')
    .argument('<prompt>')
    .requiredOption('--agent <name>', 'the agent the runs use')
    .option('--cron <expression>', 'five-field cron, e.g. "0 7 * * 1-5"', arg('--cron', checkCron))
    .option('--timezone <zone>', 'IANA time zone of --cron (default UTC)', arg('--timezone', checkTimezone))
    .option(
      '--every <duration>',
      'a fixed interval: 30s, 5m, 2h, 1d',
      arg('--every', (v, f) => parseDuration(v, f, MIN_EVERY_MS)),
    )
    .option('--conversation <id>', 'every run goes to this conversation')
    .option('--new-conversation-each-run', 'each run starts a new conversation (the default)')
    .option('--overlap <policy>', `a run due while one runs: ${OVERLAP_POLICIES.join(' | ')} (default skip)`, overlap)
    .option(
      '--catchup-window <duration>',
      'runs missed while the server was down this long still run (default 1m)',
      arg('--catchup-window', (v, f) => parseDuration(v, f, 10_000)),
    )
    .option('--jitter <duration>', 'delay each run by a random amount up to this', arg('--jitter', parseDuration))
    .option('--max-usd-per-day <usd>', "the schedule's spend cap per UTC day (a run past it is refused)", usd)
    .option('--webhook <url>', "POST each run's answer there, signed (X-Dreact-Signature)")
    .option('--paused', 'create it paused')
    .option('--json', 'print { "id": … } as JSON')
    .action((prompt: string, o: CreateFlags) => {
      const input = scheduleFromFlags(prompt, o);
      return withSchedules(async (svc) => {
        const created = await svc.create(LOCAL_PRINCIPAL, input);
        print(o.json, created, () =>
          [
            `schedule ${created.id} created`,
            ...(created.webhookSecret ? [`webhook secret (shown once): ${created.webhookSecret}`] : []),
          ].join('\n'),
        );
      });
    });
  schedules
    .command('list')
    .description('the schedules, with their next run')
    .option('--json', 'as JSON')
    .action((o: { json?: boolean }) =>
      withSchedules(async (svc) => {
        const all = await svc.list(LOCAL_PRINCIPAL);
        print(o.json, { schedules: all }, () =>
          all.length === 0
            ? 'no schedule'
            : all
                .map(
                  (s) =>
                    `${s.id}  ${s.agent}  ${s.when}${s.paused ? '  (paused)' : ''}${s.managed ? '  (agent file)' : ''}  next ${s.nextRuns[0] ?? '-'}  "${s.prompt.slice(0, 60)}"`,
                )
                .join('\n'),
        );
      }),
    );
  schedules
    .command('describe')
    .description('a schedule: its definition, next runs and last runs (their turn and outcome)')
    .argument('<id>')
    .option('--json', 'as JSON')
    .action((id: string, o: { json?: boolean }) =>
      withSchedules(async (svc) => {
        const d = await svc.describe(LOCAL_PRINCIPAL, id);
        print(o.json, d, () =>
          [
            `${d.id}: agent ${d.agent}, ${d.when}, overlap ${d.overlap}${d.paused ? ', paused' : ''}${d.managed ? ', from an agent file' : ''}`,
            `prompt: ${d.prompt}`,
            `conversation: ${d.conversation ?? 'a new one each run'}`,
            `runs taken ${d.actionsTaken}, skipped (overlap) ${d.skippedOverlap}, missed (catch-up window) ${d.missedCatchup}`,
            `next runs: ${d.nextRuns.join(', ') || '-'}`,
            'last runs:',
            ...(d.runs.length === 0 ? ['  (none)'] : []),
            ...d.runs.map(
              (r) =>
                `  ${r.startedAt}  ${r.outcome}${r.refusedReason ? ` (${r.refusedReason})` : ''}  ${r.conversation ?? '-'}${r.turnIndex !== null ? ` turn ${r.turnIndex}` : ''}${r.completionPath ? ` ${r.completionPath}` : ''}${r.delivery ? `  webhook ${r.delivery}` : ''}`,
            ),
          ].join('\n'),
        );
      }),
    );
  for (const [name, what] of [
    ['pause', 'pause a schedule (no run until unpaused)'],
    ['unpause', 'unpause a schedule'],
    ['trigger', 'run a schedule now'],
    ['delete', 'delete a schedule (its past runs and conversations stay)'],
  ] as const) {
    schedules
      .command(name)
      .description(what)
      .argument('<id>')
      .option('--json', 'print { "id", "done" } as JSON')
      .action((id: string, o: { json?: boolean }) =>
        withSchedules(async (svc) => {
          if (name === 'pause') await svc.pause(LOCAL_PRINCIPAL, id);
          else if (name === 'unpause') await svc.unpause(LOCAL_PRINCIPAL, id);
          else if (name === 'trigger') await svc.trigger(LOCAL_PRINCIPAL, id);
          else await svc.delete(LOCAL_PRINCIPAL, id);
          const past = { pause: 'paused', unpause: 'unpaused', trigger: 'triggered', delete: 'deleted' }[name];
          print(o.json, { id, done: past }, () => `schedule ${id} ${past}`);
        }),
      );
  }
  schedules
    .command('backfill')
    .description('take the runs the schedule would have taken from --from to --to')
    .argument('<id>')
    .requiredOption('--from <time>', 'start (ISO 8601)', time('--from'))
    .requiredOption('--to <time>', 'end (ISO 8601)', time('--to'))
    .option('--json', 'print { "id", "done" } as JSON')
    .action((id: string, o: { from: Date; to: Date; json?: boolean }) =>
      withSchedules(async (svc) => {
        await svc.backfill(LOCAL_PRINCIPAL, id, o.from, o.to);
        print(
          o.json,
          { id, done: 'backfilled', from: o.from.toISOString(), to: o.to.toISOString() },
          () => `schedule ${id}: runs from ${o.from.toISOString()} to ${o.to.toISOString()} started`,
        );
      }),
    );
}
