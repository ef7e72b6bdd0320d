/**
 * A user message that arrives while its conversation's turn runs (the AI SDK chat and AG-UI routes):
 * it joins that turn — a followup (taken at the next round boundary; nothing running stops) or a
 * steer (the round stops and the turn answers with it in mind) — instead of queueing a turn behind it.
 */
import type { Pool } from 'pg';
import { DreactError, type DreactClient } from '../../client/api';
import { listTurns, type TurnRow } from '../../store/turn-store';
import { liveStreamStart } from '../../store/stream-window';

/** The conversation's running (or queued) turn, if any. */
export async function activeTurn(pool: Pool, conversationId: string): Promise<TurnRow | undefined> {
  return (await listTurns(pool, conversationId)).filter((t) => t.status === 'running' || t.status === 'queued').at(-1);
}

/**
 * Folds a user message into the running turn (a followup, or a steer) and says which turn to
 * stream, from its first event; undefined when the turn ended meanwhile and nothing took it.
 */
export async function injectIntoRunning(
  client: DreactClient,
  pool: Pool,
  conversationId: string,
  message: { text: string; messageId: string; kind: 'followup' | 'steer' },
): Promise<{ turnId: string; after: number } | undefined> {
  try {
    if (message.kind === 'steer') await client.steer(conversationId, message.text, message.messageId);
    else await client.followup(conversationId, message.text, message.messageId);
  } catch (err) {
    // The turn ended between the check and the steer: the caller starts a turn instead.
    if (err instanceof DreactError && err.code === 'no_active_turn') return undefined;
    throw err;
  }
  // A followup the conversation took as its next turn (the running one had just ended) is that turn.
  const turn = await activeTurn(pool, conversationId);
  if (!turn) return undefined;
  const after = await liveStreamStart(pool, conversationId, [turn.turnId]);
  return after === undefined ? undefined : { turnId: turn.turnId, after };
}
