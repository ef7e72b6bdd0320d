/**
 * Schedules declared in an agent file (`schedules:`, core/agents/definition.ts): each has a name
 * (unique in the file) and the fields of a schedule in the file's snake_case — `cron` (with
 * `timezone`) or `every`, `prompt`, `conversation` (absent: a new conversation each run),
 * `overlap`, `catchup_window`, `jitter`, `max_usd_per_day`, `webhook: { url }`, `paused`. Checked
 * by the one schedule schema (core/schedules/spec.ts), so a bad cron names the file's field. The
 * worker on the workflows queue reconciles them at start (workers/schedule-reconcile.ts): its id
 * is `agent.<agent>.<name>@<queue>`. Pure.
 */
import { z } from 'zod';
import { OVERLAP_POLICIES, ScheduleInputSchema, type ScheduleInput } from './spec';

const SNAKE: Record<string, string> = {
  catchup_window: 'catchupWindow',
  max_usd_per_day: 'maxUsdPerDay',
};
const CAMEL = Object.fromEntries(Object.entries(SNAKE).map(([k, v]) => [v, k]));

export const AgentScheduleSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a schedule name is a lowercase slug: a-z first, then a-z 0-9 _ -')
      .describe('The schedule name, unique in this file.'),
    prompt: z.string().describe('The prompt of each run.'),
    cron: z.string().optional().describe('Five-field cron expression, e.g. "0 7 * * 1-5".'),
    timezone: z.string().optional().describe('IANA time zone of cron (default UTC).'),
    every: z.string().optional().describe('A fixed interval instead of cron: 30s, 5m, 2h, 1d.'),
    conversation: z.string().optional().describe('Every run goes to this conversation; absent: a new one each run.'),
    overlap: z
      .enum(OVERLAP_POLICIES)
      .optional()
      .describe('A run due while one runs: skip (default), buffer-one, cancel.'),
    catchup_window: z.string().optional().describe('Runs missed while the server was down this long still run.'),
    jitter: z.string().optional().describe('Delay each run by a random amount up to this.'),
    max_usd_per_day: z.number().optional().describe("The schedule's spend cap per UTC day."),
    webhook: z.strictObject({ url: z.string() }).optional().describe("POST each run's answer there, signed."),
    paused: z.boolean().optional(),
  })
  .superRefine((s, ctx) => {
    const parsed = ScheduleInputSchema.safeParse(toInput('x', s));
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      const [head, ...rest] = issue.path;
      const key = typeof head === 'string' ? (CAMEL[head] ?? head) : head;
      ctx.addIssue({ code: 'custom', path: key === undefined ? [] : [key, ...rest], message: issue.message });
    }
  });
export type AgentSchedule = z.infer<typeof AgentScheduleSchema>;

function toInput(agent: string, s: AgentSchedule): Record<string, unknown> {
  const { name: _name, ...fields } = s;
  const out: Record<string, unknown> = { agent };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[SNAKE[k] ?? k] = v;
  return out;
}

/** The checked schedule an agent file's entry declares. */
export function agentScheduleInput(agent: string, s: AgentSchedule): ScheduleInput {
  return ScheduleInputSchema.parse(toInput(agent, s));
}

/** The id of an agent file's schedule on a workflows queue. */
export const agentScheduleId = (agent: string, name: string, queue: string) => `agent.${agent}.${name}@${queue}`;
