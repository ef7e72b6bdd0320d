/**
 * PersistTurnWorkflow: at turn end writes the conv.timeline.v1 artifact and the turn log to
 * Postgres, and closes the turn row. A child workflow so persistence shows as its own
 * execution in Temporal UI and retries independently of the turn.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turn-activities';
import type { TurnSummary } from '../core/turn/contracts';

const { persistTurn } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export async function PersistTurnWorkflow(input: TurnSummary): Promise<{ blocks: number; bytes: number }> {
  return persistTurn.executeWithOptions({ summary: `persist conv.timeline.v1 ${input.turnId}` }, [input]);
}
