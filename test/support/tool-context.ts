/** A tool context bound to a real Postgres store, for running tool implementations without Temporal. */
import type { Pool } from 'pg';
import type { ToolContext } from '../../activities/tools/types';
import { pgToolStore } from '../../store/tool-store';

export function toolContext(
  pool: Pool,
  at: { conversationId: string; callId: string; turnId: string; now: Date },
  stream: ToolContext['stream'] = () => undefined,
): ToolContext {
  return {
    store: pgToolStore(pool, at.conversationId),
    conversationId: at.conversationId,
    turnId: at.turnId,
    callId: at.callId,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    now: () => at.now,
    stream,
  };
}
