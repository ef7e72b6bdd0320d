/**
 * Everything a new turn is checked for before anything is written — the prompt and its options
 * (the turn request's schema, client/api.ts `validateTurn`), the message id, and the agent (a name
 * some worker has: agent-routes.ts `knownAgent`) — shared by `POST /v1/conversations/:id/turns`
 * and the MCP server's `start_turn`, so neither claims a conversation, stages a file or starts a
 * workflow for a request that would fail. Takes the caller, so a rule about who may run which
 * agent belongs here too.
 */
import type { Pool } from 'pg';
import type { DreactClient } from '../../client/api';
import type { Principal } from '../../core/tenancy/principal';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { knownAgent } from './agent-routes';

export interface TurnStartCheck {
  conversationId: string;
  prompt: string;
  options?: TurnOptionsInput;
  messageId?: string | undefined;
  agent?: string | undefined;
}

/** Throws a `bad_input` DreactError naming the field; writes nothing. */
export async function checkTurnStart(
  client: DreactClient,
  pool: Pool,
  principal: Principal,
  t: TurnStartCheck,
): Promise<void> {
  client.validateTurn(t.conversationId, t.prompt, t.options ?? {}, t.messageId ?? 'msg_validate', undefined, t.agent);
  // An agent the caller's tenant may not see is an unknown agent (its name is not listed either).
  if (t.agent !== undefined) await knownAgent(pool, t.agent, principal);
}
