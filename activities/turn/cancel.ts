/**
 * recordTurnCancellation: the turn's cancellation in the timeline, written before the workflow
 * cancels its in-flight work (workflows/turn/run.ts), so an interrupted round reads it and says
 * "cancelled by <who>" instead of "a steer" (activities/turn/round/io.ts). Idempotent: the block
 * id is the turn's (one cancellation per turn).
 */
import type { ActivityDeps } from '../deps';
import { appendBlocks } from '../../store/timeline-store';
import { turnCancelledBlock, type CancelRequest } from '../../core/turn/cancellation';

export interface TurnCancellationInput {
  conversationId: string;
  turnId: string;
  request: CancelRequest;
}

export function makeRecordTurnCancellation(deps: ActivityDeps) {
  const pool = deps.db.pool;
  return async function recordTurnCancellation(input: TurnCancellationInput): Promise<void> {
    const { conversationId, turnId, request } = input;
    await appendBlocks(pool, conversationId, [turnCancelledBlock(turnId, request, deps.now().toISOString())]);
  };
}
