/**
 * A schedule as Temporal holds it: the ScheduleOptions built from a checked schedule
 * (core/schedules/spec.ts) and its owner — its spec (cron in a time zone, or an interval; jitter),
 * policies (overlap, catch-up window), state (paused, note), the action (ScheduledTurnWorkflow on
 * the workflows queue with the run's input, the `ScheduleId` and owner search attributes) and a
 * memo naming its owner and who manages it (`managedBy: 'agent-file'` on the ones an agent file
 * declares; the definition itself is kept in Postgres, store/schedules/schedule-store.ts).
 */
import type { ScheduleOptions, ScheduleUpdateOptions, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { AgentNameKey, ProjectIdKey, ScheduleIdKey, TenantIdKey } from '../../contract/definitions';
import { parseDuration, TEMPORAL_OVERLAP, type ScheduleInput } from '../../core/schedules/spec';
import { runWorkflowIdPrefix, type ScheduledRunInput, type ScheduleOwner } from '../../core/schedules/run';

/** Catch-up window of a schedule that names none: runs missed while the server was down this long are still taken. */
export const DEFAULT_CATCHUP_MS = 60_000;

/** The memo on a schedule (Temporal UI shows it): its owner, and whether an agent file manages it. */
export interface ScheduleMemo {
  owner: ScheduleOwner;
  managedBy?: 'agent-file' | 'user';
}

export interface BuildArgs {
  id: string;
  input: ScheduleInput;
  owner: ScheduleOwner;
  conversationId?: string;
  taskQueue: string;
  managed?: boolean;
}

export function runInputOf(a: BuildArgs): ScheduledRunInput {
  return {
    scheduleId: a.id,
    agent: a.input.agent,
    prompt: a.input.prompt,
    owner: a.owner,
    ...(a.conversationId !== undefined ? { conversationId: a.conversationId } : {}),
    ...(a.input.maxUsdPerDay !== undefined ? { maxUsdPerDay: a.input.maxUsdPerDay } : {}),
    ...(a.input.webhook ? { webhookUrl: a.input.webhook.url } : {}),
  };
}

export function scheduleOptions(a: BuildArgs): ScheduleOptions {
  const { input } = a;
  const jitter = input.jitter !== undefined ? { jitter: parseDuration(input.jitter, 'jitter') } : {};
  const spec: ScheduleOptions['spec'] =
    input.every !== undefined
      ? { intervals: [{ every: parseDuration(input.every, 'every') }], ...jitter }
      : { cronExpressions: [input.cron!], ...(input.timezone ? { timezone: input.timezone } : {}), ...jitter };
  const action: ScheduleOptionsStartWorkflowAction<Workflow> = {
    type: 'startWorkflow',
    workflowType: 'ScheduledTurnWorkflow',
    args: [runInputOf(a)],
    taskQueue: a.taskQueue,
    workflowId: runWorkflowIdPrefix(a.id),
    staticSummary: `schedule ${a.id}: agent ${input.agent}: ${input.prompt.slice(0, 100)}`,
    typedSearchAttributes: [
      { key: ScheduleIdKey, value: a.id },
      { key: TenantIdKey, value: a.owner.tenantId },
      { key: ProjectIdKey, value: a.owner.projectId },
      { key: AgentNameKey, value: input.agent },
    ],
  };
  const memo: ScheduleMemo = { owner: a.owner, managedBy: a.managed ? 'agent-file' : 'user' };
  return {
    scheduleId: a.id,
    spec,
    action,
    policies: {
      overlap: TEMPORAL_OVERLAP[input.overlap],
      catchupWindow:
        input.catchupWindow !== undefined ? parseDuration(input.catchupWindow, 'catchupWindow') : DEFAULT_CATCHUP_MS,
    },
    state: { paused: input.paused, ...(input.note !== undefined ? { note: input.note } : {}) },
    memo: { dreact: memo },
    typedSearchAttributes: [
      { key: ScheduleIdKey, value: a.id },
      { key: TenantIdKey, value: a.owner.tenantId },
      { key: ProjectIdKey, value: a.owner.projectId },
    ],
  };
}

/** The update that makes an existing schedule match `a` (its memo stays as created). */
export function scheduleUpdate(a: BuildArgs): (prev: ScheduleUpdateOptions) => ScheduleUpdateOptions {
  const next = scheduleOptions(a);
  return (prev) => ({
    ...prev,
    spec: next.spec,
    action: next.action,
    policies: { ...prev.policies, ...next.policies },
    state: {
      ...prev.state,
      paused: next.state?.paused ?? false,
      ...(next.state?.note !== undefined ? { note: next.state.note } : {}),
    },
  });
}
