/**
 * The preamble every model-calling turn activity shares — a decision round (scope.ts), the answer
 * synthesis (activities/turn/synthesize.ts): its context, ids and stream publisher, and the
 * heartbeat that runs while its model call streams.
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { StreamPublisher } from '../../../store/publisher';
import type { ActivityDeps } from '../../deps';
import { heartbeating, type Progress } from '../../heartbeat';

/** The preamble every model-calling turn activity shares: its context, ids and stream publisher. */
export interface ActivityRound {
  ctx: Context;
  attempt: number;
  /** The turn workflow's id (ids of the round's blocks derive from it). */
  workflowId: string;
  pool: Pool;
  publisher: StreamPublisher;
}

/** Opens the activity's stream publisher; a retried attempt announces itself with `retry`. */
export function openActivityRound(
  deps: Pick<ActivityDeps, 'db'>,
  at: { conversationId: string; turnId: string },
  retry: { round: number } | { phase: 'synthesis' },
): ActivityRound {
  const ctx = Context.current();
  const attempt = ctx.info.attempt;
  const pool = deps.db.pool;
  const publisher = new StreamPublisher(pool, at.conversationId, { turnId: at.turnId, attempt });
  if (attempt > 1) publisher.emit({ kind: 'retry', payload: { ...retry, attempt } });
  return { ctx, attempt, workflowId: ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId, pool, publisher };
}

/**
 * Runs `fn` (a model stream) while heartbeating every second, whatever the stream does; the
 * stream's per-chunk progress rides on the next beat.
 */
export function whileStreaming<T>(round: number, fn: (progress: Progress) => Promise<T>): Promise<T> {
  return heartbeating(fn, () => ({ round, phase: 'waiting' }));
}
