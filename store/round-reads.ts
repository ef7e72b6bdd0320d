/**
 * What a decision round reads, in as few statements as the data allows: the view (the blocks the
 * model can see), the prompt cache's state and the calibrated chars-per-token ratio, the sources
 * pool, the current turn's workspace files (ANNOUNCE) and whether a spend budget covers the
 * conversation. The per-round values are columns of the `conversations` row's statement; with the
 * worker's view cache warm that is the same statement that fetches the view's new rows — ONE
 * statement a round, where it was four.
 */
import type { Pool } from 'pg';
import type { Block } from '../core/timeline/block';
import type { CacheState } from '../core/timeline/prune';
import type { SourceRow } from '../core/timeline/sources';
import type { SourceRef } from '../core/channels';
import { workspaceStateLines } from '../core/workspace/refs';
import { FILE_ARTIFACT_KIND } from './artifact-store';
import { BUDGETED_COLUMN_SQL } from './budget-store';
import { SOURCES_POOL_KEY, SOURCES_POOL_KIND, sourcesPoolRows } from './sources-store';
import { loadViewBlocks } from './timeline-store';
import { withSourceRefs } from './conversation-store';
import type { ViewCache } from './view-cache';
import { readSide, type SideRead } from './side-read';

export interface RoundState {
  cacheState: CacheState;
  /** Calibrated characters per token (undefined: not calibrated yet). */
  charsPerToken: number | undefined;
  /** The sources pool and its citation refs (for live [[S:n]] resolution in the answer channel). */
  sources: { rows: SourceRow[]; refs: SourceRef[] };
  /** ANNOUNCE workspace lines: the current turn's files by scope, where each came from. */
  workspace: string[];
  /**
   * Whether a spend budget covers the conversation's calls (undefined: no conversation row yet).
   * False lets the round's model call skip its reservation (activities/model/middleware/spend.ts).
   */
  budgeted: boolean | undefined;
}

/** The round's per-conversation state as columns of the conversation row's statement. */
export function roundStateRead(conversationId: string, turnId: string): SideRead<RoundState> {
  return {
    columns: (param) => `c.cache_last_touch_at AS round_cache_touch, c.cache_ttl_seconds AS round_cache_ttl,
      c.chars_per_token AS round_chars_per_token, ${BUDGETED_COLUMN_SQL} AS round_budgeted,
      (SELECT jsonb_build_object('payload', a.payload) FROM artifacts a
        WHERE a.conversation_id = c.id AND a.kind = ${param(SOURCES_POOL_KIND)} AND a.key = ${param(SOURCES_POOL_KEY)}) AS round_sources,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('key', a.key, 'size', a.size_bytes, 'from', a.payload->'checked_out_from')
                 ORDER BY a.created_at, a.key), '[]'::jsonb)
         FROM artifacts a
        WHERE a.conversation_id = c.id AND a.kind = ${param(FILE_ARTIFACT_KIND)} AND starts_with(a.key, ${param(`${turnId}/`)})) AS round_files`,
    map: (row) => {
      const cacheState: CacheState = {
        lastTouchAt: row?.round_cache_touch == null ? null : Number(row.round_cache_touch),
      };
      if (row?.round_cache_ttl != null) cacheState.ttlSeconds = Number(row.round_cache_ttl);
      const pool = row?.round_sources as { payload: unknown } | null | undefined;
      const rows = pool ? sourcesPoolRows(conversationId, pool.payload) : [];
      const files = (row?.round_files ?? []) as Array<{ key: string; size: number; from?: unknown }>;
      return {
        cacheState,
        charsPerToken: row?.round_chars_per_token == null ? undefined : Number(row.round_chars_per_token),
        budgeted: row === undefined ? undefined : row.round_budgeted === true,
        sources: withSourceRefs(rows),
        workspace: workspaceStateLines(
          turnId,
          files.map((f) => ({
            key: f.key,
            sizeBytes: f.size,
            ...(typeof f.from === 'string' ? { checkedOutFrom: f.from } : {}),
          })),
        ),
      };
    },
  };
}

/**
 * Everything a round reads: with the view cache, one statement (a cold or moved view adds its
 * reload); without it, the view and the round state as two statements at once.
 */
export async function loadRoundReads(
  db: Pool,
  conversationId: string,
  turnId: string,
  viewCache?: ViewCache,
): Promise<RoundState & { blocks: Block[] }> {
  const side = roundStateRead(conversationId, turnId);
  if (viewCache) {
    const { blocks, side: state } = await viewCache.loadWith(db, conversationId, side);
    return { blocks, ...state };
  }
  const [blocks, state] = await Promise.all([loadViewBlocks(db, conversationId), readSide(db, conversationId, side)]);
  return { blocks, ...state };
}

/** A round's reads as one port (`deps.reads`), built once over the pool and the worker's view cache. */
export interface RoundReads {
  /** Everything round `turnId` of the conversation reads (loadRoundReads). */
  load(conversationId: string, turnId: string): Promise<RoundState & { blocks: Block[] }>;
}

/** The round's reads over `db`; with `viewCache` (the worker's), a round reads only the view's new rows. */
export function roundReads(db: Pool, viewCache?: ViewCache): RoundReads {
  return { load: (conversationId, turnId) => loadRoundReads(db, conversationId, turnId, viewCache) };
}
