/**
 * PurgeConversationWorkflow (`purge/<conversationId>`): retention of a conversation. Cancels the
 * conversation workflow (and with it a running turn), removes every row of the conversation from
 * Postgres, and sweeps once more after the turn's last activities had time to stop. Idempotent:
 * run again, it removes nothing.
 */
import { getExternalWorkflowHandle, proxyActivities, sleep } from '@temporalio/workflow';
import type { PurgeActivities } from '../activities/purge';
import type { PurgeCounts } from '../store/purge-store';
import type { PurgeResult } from '../contract/workflows';

const { purgeConversation } = proxyActivities<PurgeActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export async function PurgeConversationWorkflow(input: { conversationId: string }): Promise<PurgeResult> {
  const { conversationId } = input;
  let cancelled = false;
  try {
    await getExternalWorkflowHandle(`conv/${conversationId}`).cancel();
    cancelled = true;
  } catch (err) {
    // Not running (finished, or never started): nothing to stop. Anything else is a real failure.
    if (!(err instanceof Error && /not found/i.test(err.message))) throw err;
  }
  const first = await purgeConversation.executeWithOptions({ summary: `purge conversation ${conversationId}` }, [
    input,
  ]);
  if (!cancelled) return { conversationId, cancelled, removed: first };
  await sleep('5 seconds');
  const second = await purgeConversation.executeWithOptions(
    { summary: `purge conversation ${conversationId} (second sweep)` },
    [input],
  );
  const removed = { ...first };
  // `?? 0`: a sweep by a worker that knows a table the first sweep's worker did not.
  for (const k of Object.keys(second) as Array<keyof PurgeCounts>) removed[k] = (removed[k] ?? 0) + second[k];
  return { conversationId, cancelled, removed };
}
