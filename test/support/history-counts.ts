/**
 * What a turn costs Temporal, counted from its histories: events and workflow tasks per execution
 * (the conversation's share of a turn, the turn, its children). Used by the peers bench and by the
 * regression test on a turn's history shape — counts, never times.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export interface HistoryCounts {
  events: number;
  /** Workflow tasks the workflow completed (WorkflowTaskCompleted events). */
  workflowTasks: number;
  /** Workflow tasks that failed or timed out (each is retried: more server work, no progress). */
  failedWorkflowTasks: number;
  /** Of those, sticky-queue schedule-to-start timeouts (the worker did not poll its sticky queue in time). */
  stickyTimeouts: number;
}

export const NO_COUNTS: HistoryCounts = { events: 0, workflowTasks: 0, failedWorkflowTasks: 0, stickyTimeouts: 0 };

export function addCounts(a: HistoryCounts, b: HistoryCounts): HistoryCounts {
  return {
    events: a.events + b.events,
    workflowTasks: a.workflowTasks + b.workflowTasks,
    failedWorkflowTasks: a.failedWorkflowTasks + b.failedWorkflowTasks,
    stickyTimeouts: a.stickyTimeouts + b.stickyTimeouts,
  };
}

/** Counts of `events` (a history, or the part of one after a turn's start). */
export function countEvents(events: temporal.api.history.v1.IHistoryEvent[]): HistoryCounts {
  let workflowTasks = 0;
  let failedWorkflowTasks = 0;
  let stickyTimeouts = 0;
  for (const e of events) {
    if (e.workflowTaskCompletedEventAttributes) workflowTasks++;
    if (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) failedWorkflowTasks++;
    // TIMEOUT_TYPE_SCHEDULE_TO_START (2): only a sticky queue's workflow task times out before it starts.
    if (e.workflowTaskTimedOutEventAttributes?.timeoutType === 2) stickyTimeouts++;
  }
  return { events: events.length, workflowTasks, failedWorkflowTasks, stickyTimeouts };
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
