/**
 * A conversation as `conv.timeline.v1`: its blocks, sources pool, title, start and prompt-cache
 * touch, read from Postgres and built by core/timeline/payload.ts. Persisted after every turn and
 * served by the API's export.
 */
import type { Queryable } from './db';
import { loadBlocks } from './timeline-store';
import { loadConversation } from './conversation-store';
import { loadSourcesPool } from './sources-store';
import { buildTimelinePayload, type TimelinePayload } from '../core/timeline/payload';
import type { Block } from '../core/timeline/block';
import type { SourceRow } from '../core/timeline/sources';

export async function conversationTimeline(
  db: Queryable,
  conversationId: string,
  ts: string,
): Promise<{ payload: TimelinePayload; blocks: Block[]; sourcesPool: SourceRow[] }> {
  const [blocks, conv, sourcesPool] = await Promise.all([
    loadBlocks(db, conversationId),
    loadConversation(db, conversationId),
    loadSourcesPool(db, conversationId),
  ]);
  const payload = buildTimelinePayload({
    ts,
    blocks,
    sourcesPool,
    conversationTitle: conv?.title ?? null,
    conversationStartedAt: conv?.createdAt.toISOString() ?? null,
    cacheLastTouchAt: conv?.cacheLastTouchAt == null ? null : Math.floor(conv.cacheLastTouchAt / 1000),
    cacheLastTtlSeconds: conv?.cacheTtlSeconds ?? null,
  });
  return { payload, blocks, sourcesPool };
}
