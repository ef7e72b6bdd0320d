/**
 * PersistTurnWorkflow: at turn end writes the conv.timeline.v1 artifact and the turn log to
 * Postgres, closes the turn row, and indexes the turn for react.memsearch. A child workflow so persistence shows as its own
 * execution in Temporal UI and retries independently of the turn.
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turn-activities';
import type { ProducedFile } from '../core/stream/events';
import type { TurnSummary } from '../core/turn/activity-contracts';

/**
 * Both steps as LOCAL activities: short, Postgres (and the embeddings service) only, so the whole
 * child runs in one workflow task, no server round trip per step; retried in the worker.
 */
const { persistTurn, indexTurnMemory } = proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export async function PersistTurnWorkflow(
  input: TurnSummary,
): Promise<{ blocks: number; bytes: number; files?: ProducedFile[] }> {
  const persisted = await persistTurn.executeWithOptions({ summary: `persist conv.timeline.v1 ${input.turnId}` }, [
    input,
  ]);
  // react.memsearch's index.
  await indexTurnMemory.executeWithOptions({ summary: `index memory ${input.turnId}` }, [
    { conversationId: input.conversationId, turnId: input.turnId, turnIndex: input.turnIndex },
  ]);
  return persisted;
}
