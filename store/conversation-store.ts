/** Per-conversation state read by the decide activity: prompt-cache touch and the sources pool. */
import type { Pool } from 'pg';
import type { CacheState } from '../core/timeline/prune';
import type { SourceRow } from '../core/timeline/sources';
import type { SourceRef } from '../core/channels';
import { loadSourcesPool } from './sources-store';
import { listArtifacts } from './timeline-store';

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

/** The sources pool and its citation refs (for live [[S:n]] resolution in the answer channel). */
export async function loadSourceRefs(pool: Pool, conversationId: string): Promise<{ rows: SourceRow[]; refs: SourceRef[] }> {
  const rows = await loadSourcesPool(pool, conversationId);
  return { rows, refs: rows.map((r) => ({ sid: r.sid, title: r.title, url: r.url })) };
}

/** ANNOUNCE workspace lines: the files the current turn has written so far. */
export async function workspaceLines(pool: Pool, conversationId: string, turnId: string): Promise<string[]> {
  const files = (await listArtifacts(pool, conversationId, 'file')).filter((f) => f.turnId === turnId);
  if (files.length === 0) return ['files of this turn: none yet'];
  return files.map((f) => `fi:${f.key.replace('/', '.')} (${f.sizeBytes} bytes)`);
}
