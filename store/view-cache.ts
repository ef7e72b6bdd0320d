/**
 * A worker's cache of conversations' views (what a round renders: loadViewBlocks), so a round
 * reads only the rows appended since the last one instead of the whole view.
 *
 * Keyed by conversation, holding the view's blocks up to the last sequence number seen. A round
 * asks Postgres, in one statement, for the rows after that number, the conversation's overlay
 * counter (bumped by every hide / prune write) and how many rows the cached range has now. It
 * reloads the whole view when a range summary arrived (the view moved), when the cached range
 * changed under it (a row committed late with a lower sequence number), or when it had nothing;
 * it reloads the overlays alone when their counter moved. The result always equals
 * loadViewBlocks; sticky execution keeps a turn's rounds on one worker, so the cache is warm.
 * Bounded by bytes (LRU): a cold conversation costs one full load.
 *
 * `loadWith` reads more of the conversation in the same statement (a SideRead's columns beside
 * the `conversations` row it reads anyway): a warm round's reads are then one statement.
 */
import { LRUCache } from 'lru-cache';
import type { Pool } from 'pg';
import type { Block } from '../core/timeline/block';
import { loadViewBlocks, viewStartSeq } from './timeline-store';
import type { SideRead } from './side-read';

interface Overlay {
  hidden: boolean;
  replacementText: string | null;
}

interface CachedView {
  startSeq: number;
  lastSeq: number;
  overlaySeq: number;
  blocks: Block[];
  overlays: Map<string, Overlay>;
  bytes: number;
}

export interface ViewCacheStats {
  hits: number;
  misses: number;
  reloads: number;
  overlayReloads: number;
  conversations: number;
  bytes: number;
}

export interface ViewCache {
  /** The conversation's view, overlays applied: the same blocks as loadViewBlocks. */
  load(db: Pool, conversationId: string): Promise<Block[]>;
  /** The view and the side read's values, read by the view's own statement on the conversation row. */
  loadWith<T>(db: Pool, conversationId: string, side: SideRead<T>): Promise<{ blocks: Block[]; side: T }>;
  stats(): ViewCacheStats;
}

interface Row {
  seq: string;
  block: unknown;
}

async function loadOverlays(db: Pool, conversationId: string, startSeq: number): Promise<Map<string, Overlay>> {
  const res = await db.query<{ block_id: string; hidden: boolean; replacement_text: string | null }>(
    `SELECT o.block_id, o.hidden, o.replacement_text
       FROM block_overlays o JOIN timeline_blocks b ON b.conversation_id = o.conversation_id AND b.id = o.block_id
      WHERE o.conversation_id = $1 AND b.seq >= $2`,
    [conversationId, startSeq],
  );
  return new Map(res.rows.map((r) => [r.block_id, { hidden: r.hidden, replacementText: r.replacement_text }]));
}

/** Placeholders for a statement's values: `param(v)` adds `v` and returns its `$n`. */
function statementParams(first: unknown[]): { params: unknown[]; param: (value: unknown) => string } {
  const params = [...first];
  return { params, param: (value) => `$${params.push(value)}` };
}

/** A side read's columns after the statement's own (none without a side read). */
function sideColumns(side: SideRead<unknown> | undefined, param: (value: unknown) => string): string {
  return side ? `, ${side.columns(param)}` : '';
}

type SideRow = Record<string, unknown> | undefined;

async function loadFull(
  db: Pool,
  conversationId: string,
  side?: SideRead<unknown>,
  attempt = 1,
): Promise<{ view: CachedView; sideRow: SideRow }> {
  const { params, param } = statementParams([conversationId]);
  const overlaySeq = await db.query<{ overlay_seq: string; view_forked: boolean }>(
    `SELECT c.overlay_seq, EXISTS (SELECT 1 FROM conversation_forks fk WHERE fk.conversation_id = c.id) AS view_forked${sideColumns(side, param)}
       FROM conversations c WHERE c.id = $1`,
    params,
  );
  const startSeq = await viewStartSeq(db, conversationId);
  if (overlaySeq.rows[0]?.view_forked) {
    // A fork (store/fork-store.ts): its view, shared prefix and overlays applied, from the loader; a
    // lastSeq before the view makes every refresh reload it (forks are not cached incrementally).
    const blocks = await loadViewBlocks(db, conversationId);
    const view = { startSeq, lastSeq: -1, overlaySeq: 0, blocks, overlays: new Map(), bytes: 1 };
    return { view, sideRow: overlaySeq.rows[0] as SideRow };
  }
  const rows = await db.query<Row>(
    `SELECT seq, block FROM timeline_blocks WHERE conversation_id = $1 AND seq >= $2 ORDER BY seq`,
    [conversationId, startSeq],
  );
  const blocks = rows.rows.map((r) => r.block as Block);
  // A summary committed between the two reads moved the view: read it again.
  if (viewStartOf(rows.rows, startSeq) !== startSeq && attempt < 3)
    return loadFull(db, conversationId, side, attempt + 1);
  const view = {
    startSeq,
    lastSeq: Number(rows.rows.at(-1)?.seq ?? startSeq - 1),
    overlaySeq: Number(overlaySeq.rows[0]?.overlay_seq ?? 0),
    blocks,
    overlays: await loadOverlays(db, conversationId, startSeq),
    bytes: blocks.reduce((n, b) => n + approxBytes(b), 0),
  };
  return { view, sideRow: overlaySeq.rows[0] as SideRow };
}

function approxBytes(b: Block): number {
  return 200 + (b.text?.length ?? 0) * 2 + (b.path?.length ?? 0) * 2;
}

function applyOverlays(view: CachedView): Block[] {
  if (view.overlays.size === 0) return [...view.blocks];
  return view.blocks.map((b) => {
    const o = view.overlays.get(b.id);
    if (!o) return b;
    const out: Block = { ...b, hidden: o.hidden };
    if (o.replacementText !== null) out.replacement_text = o.replacementText;
    return out;
  });
}

export function createViewCache(opts: { maxBytes?: number } = {}): ViewCache {
  const views = new LRUCache<string, CachedView>({
    maxSize: opts.maxBytes ?? 256 * 1024 * 1024,
    sizeCalculation: (v) => Math.max(1, v.bytes),
  });
  const counts = { hits: 0, misses: 0, reloads: 0, overlayReloads: 0 };

  const refresh = async (
    db: Pool,
    conversationId: string,
    view: CachedView,
    side?: SideRead<unknown>,
  ): Promise<{ view: CachedView; sideRow: SideRow }> => {
    const { params, param } = statementParams([conversationId, view.startSeq, view.lastSeq]);
    const res = await db.query<{ overlay_seq: string; known: string; fresh: Row[] }>(
      `SELECT c.overlay_seq,
              (SELECT count(*) FROM timeline_blocks WHERE conversation_id = $1 AND seq >= $2 AND seq <= $3) AS known,
              (SELECT coalesce(jsonb_agg(jsonb_build_object('seq', seq, 'block', block) ORDER BY seq), '[]'::jsonb)
                 FROM timeline_blocks WHERE conversation_id = $1 AND seq > $3) AS fresh${sideColumns(side, param)}
         FROM conversations c WHERE c.id = $1`,
      params,
    );
    const row = res.rows[0];
    const fresh = row?.fresh ?? [];
    if (!row || Number(row.known) !== view.blocks.length || fresh.some((r) => isSummary(r.block))) {
      counts.reloads++;
      // The side read's values stand: the reload re-reads only the view.
      return { view: (await loadFull(db, conversationId)).view, sideRow: row as SideRow };
    }
    const blocks = fresh.map((r) => r.block as Block);
    const overlaySeq = Number(row.overlay_seq);
    const next: CachedView = {
      ...view,
      blocks: blocks.length ? [...view.blocks, ...blocks] : view.blocks,
      lastSeq: Number(fresh.at(-1)?.seq ?? view.lastSeq),
      bytes: view.bytes + blocks.reduce((n, b) => n + approxBytes(b), 0),
      overlaySeq,
    };
    if (overlaySeq !== view.overlaySeq) {
      counts.overlayReloads++;
      next.overlays = await loadOverlays(db, conversationId, view.startSeq);
    }
    return { view: next, sideRow: row as SideRow };
  };

  const read = async (db: Pool, conversationId: string, side?: SideRead<unknown>) => {
    const cached = views.get(conversationId);
    if (cached) counts.hits++;
    else counts.misses++;
    const got = cached ? await refresh(db, conversationId, cached, side) : await loadFull(db, conversationId, side);
    views.set(conversationId, got.view);
    return { blocks: applyOverlays(got.view), sideRow: got.sideRow };
  };

  return {
    async load(db, conversationId) {
      return (await read(db, conversationId)).blocks;
    },
    async loadWith<T>(db: Pool, conversationId: string, side: SideRead<T>) {
      const { blocks, sideRow } = await read(db, conversationId, side);
      return { blocks, side: side.map(sideRow) };
    },
    stats: () => ({ ...counts, conversations: views.size, bytes: views.calculatedSize }),
  };
}

/** Where the rows' last range summary starts the view (as viewStartSeq computes it), else `start`. */
function viewStartOf(rows: Row[], start: number): number {
  const last = [...rows].reverse().find((r) => isSummary(r.block));
  if (!last) return start;
  const kept = (last.block as Block).meta?.kept_from_block_id;
  const keptRow = rows.find((r) => (r.block as Block).id === kept);
  return Math.min(Number(last.seq), keptRow ? Number(keptRow.seq) : Number(last.seq));
}

function isSummary(block: unknown): boolean {
  return (block as { type?: string }).type === 'conv.range.summary';
}
