/**
 * The tenant of a turn is its conversation's owner (`conversations` row, claimed by the gateway
 * before the first turn; the CLI's is `local`): read once per conversation and worker, nothing
 * added to history.
 */
import { conversationOwner, type ConversationOwner } from '../../store/tenancy-store';
import { LOCAL_TENANT } from '../../core/tenancy/principal';
import type { Queryable } from '../../store/db';

const owners = new Map<string, ConversationOwner>();

/** The owner of a conversation (its tenant, project, user); the local tenant when it has no row. */
export async function turnOwner(db: Queryable, conversationId: string): Promise<ConversationOwner> {
  let owner = owners.get(conversationId);
  if (!owner) {
    owner = (await conversationOwner(db, conversationId)) ?? { ...LOCAL_TENANT, userId: null };
    if (owners.size > 10_000) owners.clear();
    owners.set(conversationId, owner);
  }
  return owner;
}
