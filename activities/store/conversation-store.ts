/** Per-conversation state read by the decide activity: prompt-cache touch and the sources pool. */
import type { Pool } from 'pg';
import type { CacheState } from '../../core/timeline/prune';
import { SourceRowSchema, type SourceRow } from '../../core/timeline/sources';
import type { SourceRef } from '../../core/channels';
import { getArtifact } from './timeline-store';

export async function loadCacheState(pool: Pool, conversationId: string): Promise<CacheState> {
  const res = await pool.query<{ cache_last_touch_at: string | null; cache_ttl_seconds: number | null }>(
    `SELECT cache_last_touch_at, cache_ttl_seconds FROM conversations WHERE id = $1`,
    [conversationId],
  );
  const row = res.rows[0];
  const state: CacheState = { lastTouchAt: row?.cache_last_touch_at == null ? null : Number(row.cache_last_touch_at) };
  if (row?.cache_ttl_seconds != null) state.ttlSeconds = row.cache_ttl_seconds;
  return state;
}

export async function saveCacheTouch(pool: Pool, conversationId: string, touchAt: number, ttlSeconds: number): Promise<void> {
  await pool.query(`UPDATE conversations SET cache_last_touch_at = $2, cache_ttl_seconds = $3 WHERE id = $1`, [conversationId, touchAt, ttlSeconds]);
}

/** The sources pool (artifact `conv.sources_pool`, payload `{sources_pool: rows}`) and its citation refs. */
export async function loadSourceRefs(pool: Pool, conversationId: string): Promise<{ rows: SourceRow[]; refs: SourceRef[] }> {
  const artifact = await getArtifact(pool, conversationId, 'conv.sources_pool', 'latest');
  const raw = (artifact?.payload as { sources_pool?: unknown[] } | undefined)?.sources_pool ?? [];
  const rows = raw.map((r, i) => {
    const parsed = SourceRowSchema.safeParse(r);
    if (!parsed.success) throw new Error(`sources pool row ${i} of ${conversationId} is invalid: ${parsed.error.issues.map((x) => x.message).join('; ')}`);
    return parsed.data;
  });
  return { rows, refs: rows.map((r) => ({ sid: r.sid, title: r.title, url: r.url })) };
}
