/**
 * The purge activity of PurgeConversationWorkflow: removes a conversation's rows from Postgres
 * (store/purge-store.ts). Idempotent: a retry or a second sweep removes nothing more.
 */
import type { ActivityDeps } from './deps';
import { purgeConversationRows, type PurgeCounts } from '../store/purge-store';

export function createPurgeActivities(deps: Pick<ActivityDeps, 'db'>) {
  return {
    async purgeConversation(input: { conversationId: string }): Promise<PurgeCounts> {
      return purgeConversationRows(deps.db.pool, input.conversationId);
    },
  };
}

export type PurgeActivities = ReturnType<typeof createPurgeActivities>;
