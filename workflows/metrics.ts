/**
 * The turn's metrics from workflow code (docs/metrics.md): Temporal's workflow `metricMeter`
 * records through the worker's runtime (the same Prometheus / OTLP exporter as the SDK's own
 * metrics) and drops everything during replay, so each turn and round counts once however often
 * its history is replayed. Labels are bounded (outcome kinds, completion paths); the SDK adds
 * `namespace`, `task_queue` and `workflow_type`. No conversation id, no user text.
 */
import { metricMeter, workflowInfo } from '@temporalio/workflow';

export interface TurnMetrics {
  turnStarted(): void;
  turnCompleted(completionPath: string): void;
  turnFailed(): void;
  roundStarted(): void;
  roundFinished(outcome: string): void;
}

export function turnMetrics(): TurnMetrics {
  // A subagent's turn runs as `conv/<parent>/sub/<callId>` (core/agents/subagents.ts); every turn
  // is a child workflow (of its conversation's), so the parent alone does not tell.
  const kind = workflowInfo().workflowId.includes('/sub/') ? 'subagent' : 'turn';
  const turns = (what: string) =>
    metricMeter.createCounter(`dreact_turns_${what}`, '{turn}', `Turns ${what} (kind: turn or subagent)`);
  return {
    turnStarted: () => turns('started').add(1, { kind }),
    turnCompleted: (completionPath) => turns('completed').add(1, { kind, completion_path: completionPath }),
    turnFailed: () => turns('failed').add(1, { kind }),
    roundStarted: () =>
      metricMeter.createCounter('dreact_rounds_started', '{round}', 'Decision rounds started').add(1, { kind }),
    roundFinished: (outcome) =>
      metricMeter
        .createCounter('dreact_rounds_finished', '{round}', 'Decision rounds finished, by outcome')
        .add(1, { kind, outcome }),
  };
}

/** Compactions by status (compacted, skipped, failed, breaker_open). */
export function compactionFinished(status: string): void {
  metricMeter.createCounter('dreact_compactions', '{compaction}', 'Compactions, by status').add(1, { status });
}
