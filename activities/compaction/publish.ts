/** Publishes one `compact` stream event of a compaction and flushes it (one per activity step). */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { StreamEventBody } from '../../core/stream/events';
import { StreamPublisher } from '../../store/publisher';

export async function publishCompact(
  pool: Pool,
  at: { conversationId: string; turnId: string },
  payload: Extract<StreamEventBody, { kind: 'compact' }>['payload'],
): Promise<void> {
  const publisher = new StreamPublisher(pool, at.conversationId, {
    turnId: at.turnId,
    attempt: Context.current().info.attempt,
  });
  publisher.emit({ kind: 'compact', payload });
  await publisher.close();
}
