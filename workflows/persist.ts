/**
 * PersistTurnWorkflow: at turn end writes the conv.timeline.v1 artifact and the turn log to
 * Postgres, closes the turn row, and indexes the turn for react.memsearch. A child workflow so persistence shows as its own
 * execution in Temporal UI and retries independently of the turn.
 */
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turn-activities';
import type { TurnSummary } from '../core/turn/contracts';

const { persistTurn } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

const { indexTurnMemory } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

/**
 * The same two steps as LOCAL activities: short, Postgres (and the embeddings service) only, so
 * the whole child runs in one workflow task, no server round trip per step. Retried in the worker
 * under the same policy; histories from before `local-persist` replay the activities above.
 */
const local = proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export async function PersistTurnWorkflow(input: TurnSummary): Promise<{ blocks: number; bytes: number }> {
  const steps = patched('local-persist') ? local : { persistTurn, indexTurnMemory };
  const persisted = await steps.persistTurn.executeWithOptions(
    { summary: `persist conv.timeline.v1 ${input.turnId}` },
    [input],
  );
  // react.memsearch's index (histories recorded before it existed skip it on replay).
  if (patched('memsearch-index')) {
    await steps.indexTurnMemory.executeWithOptions({ summary: `index memory ${input.turnId}` }, [
      { conversationId: input.conversationId, turnId: input.turnId, turnIndex: input.turnIndex },
    ]);
  }
  return persisted;
}
