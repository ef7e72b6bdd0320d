/**
 * appendToolResults activity: after a round's tool calls ran concurrently, their held results go
 * to the timeline in call order, in one transaction. Idempotent: a retry finds nothing held and
 * appends nothing (the blocks' ids are deterministic besides).
 */
import type { ToolBatchInput } from '../../core/turn/activity-contracts';
import { appendHeldToolResults } from '../../store/tool-results-store';
import type { ActivityDeps } from '../deps';

export function makeAppendToolResults(deps: ActivityDeps) {
  return async function appendToolResults(input: ToolBatchInput): Promise<{ appended: string[] }> {
    return { appended: await appendHeldToolResults(deps.db.pool, input.conversationId, input.callIds) };
  };
}
