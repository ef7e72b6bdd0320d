/**
 * What a turn costs Temporal, counted from its histories: events and workflow tasks per execution
 * (the conversation's share of a turn, the turn, its children). Used by the peers bench and by the
 * regression test on a turn's history shape — counts, never times.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export interface HistoryCounts {
  events: number;
  /** Workflow tasks the workflow completed (WorkflowTaskCompleted events). */
  workflowTasks: number;
  /** Workflow tasks that failed or timed out (each is retried: more server work, no progress). */
  failedWorkflowTasks: number;
  /** Of those, sticky-queue schedule-to-start timeouts (the worker did not poll its sticky queue in time). */
  stickyTimeouts: number;
  /** Each failed or timed-out workflow task by why: a timeout type (`timeout START_TO_CLOSE`) or a failure cause. */
  failureCauses: Record<string, number>;
}

export const NO_COUNTS: HistoryCounts = {
  events: 0,
  workflowTasks: 0,
  failedWorkflowTasks: 0,
  stickyTimeouts: 0,
  failureCauses: {},
};

export function addCounts(a: HistoryCounts, b: HistoryCounts): HistoryCounts {
  return {
    events: a.events + b.events,
    workflowTasks: a.workflowTasks + b.workflowTasks,
    failedWorkflowTasks: a.failedWorkflowTasks + b.failedWorkflowTasks,
    stickyTimeouts: a.stickyTimeouts + b.stickyTimeouts,
    failureCauses: mergeCounts(a.failureCauses, b.failureCauses),
  };
}

function mergeCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
}

const { TimeoutType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/** Counts of `events` (a history, or the part of one after a turn's start). */
export function countEvents(events: temporal.api.history.v1.IHistoryEvent[]): HistoryCounts {
  let workflowTasks = 0;
  let failedWorkflowTasks = 0;
  let stickyTimeouts = 0;
  const failureCauses: Record<string, number> = {};
  const note = (why: string) => (failureCauses[why] = (failureCauses[why] ?? 0) + 1);
  for (const e of events) {
    const timedOut = e.workflowTaskTimedOutEventAttributes;
    if (timedOut) note(`timeout ${(TimeoutType[timedOut.timeoutType ?? 0] ?? '?').replace('TIMEOUT_TYPE_', '')}`);
    const failed = e.workflowTaskFailedEventAttributes;
    if (failed) note((WorkflowTaskFailedCause[failed.cause ?? 0] ?? '?').replace('WORKFLOW_TASK_FAILED_CAUSE_', ''));
    if (e.workflowTaskCompletedEventAttributes) workflowTasks++;
    if (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) failedWorkflowTasks++;
    // TIMEOUT_TYPE_SCHEDULE_TO_START (2): only a sticky queue's workflow task times out before it starts.
    if (e.workflowTaskTimedOutEventAttributes?.timeoutType === 2) stickyTimeouts++;
  }
  return { events: events.length, workflowTasks, failedWorkflowTasks, stickyTimeouts, failureCauses };
}

/** The events of a workflow's history (the current run). */
export async function historyEvents(
  client: Client,
  workflowId: string,
): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

/**
 * A long-lived workflow's share of each turn (the conversation's): `share(id)` counts the events
 * added since the last call for that id — the whole history at the first call.
 */
export function historyShares(client: Client) {
  const seen = new Map<string, number>();
  return async (workflowId: string): Promise<HistoryCounts> => {
    const events = await historyEvents(client, workflowId);
    const from = seen.get(workflowId) ?? 0;
    seen.set(workflowId, events.length);
    return countEvents(events.slice(from));
  };
}
