/**
 * Timeline persistence: append-only blocks with deterministic ids, overlays for hide/prune,
 * artifacts. Every write is idempotent so retried activities never duplicate.
 */
import type { Queryable } from './db';
import { BlockSchema, type Block } from '../core/timeline/block';
import { jsonForPostgres } from '../core/text';

/**
 * A fork's shared blocks (store/fork-store.ts), joined as `conversation_forks f JOIN
 * timeline_blocks b ON <this>`: the source's blocks up to the fork's turn, read by reference.
 */
export const FORK_PREFIX_JOIN = `b.conversation_id = f.source_conversation_id AND b.seq <= f.up_to_seq`;

export async function ensureConversation(db: Queryable, conversationId: string): Promise<void> {
  await db.query(`INSERT INTO conversations (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, [conversationId]);
}

/**
 * Appends blocks in order, atomically: one INSERT … SELECT statement, so a round's blocks are
 * either all written or none (a crash or a failing row never leaves half a round for a retry's
 * stored outcome to pick up). Blocks whose id exists are skipped (idempotent retries); a repeated
 * id inside one batch keeps its first occurrence. Returns the ids actually inserted, in order.
 */
export async function appendBlocks(db: Queryable, conversationId: string, blocks: Block[]): Promise<string[]> {
  const seen = new Set<string>();
  const rows: Block[] = [];
  for (const raw of blocks) {
    const block = BlockSchema.parse(raw);
    if (seen.has(block.id)) continue;
    seen.add(block.id);
    rows.push(block);
  }
  if (rows.length === 0) return [];
  const res = await db.query<{ id: string }>(
    `INSERT INTO timeline_blocks (conversation_id, id, turn_id, type, path, call_id, block)
     SELECT $1, b->>'id', b->>'turn_id', b->>'type', b->>'path', b->>'call_id', b
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(b, ord)
      ORDER BY ord
     ON CONFLICT (conversation_id, id) DO NOTHING
     RETURNING id`,
    [conversationId, jsonForPostgres(rows)],
  );
  const inserted = new Set(res.rows.map((r) => r.id));
  return rows.map((b) => b.id).filter((id) => inserted.has(id));
}

/** Loads the conversation's blocks in append order, with hide/prune overlays applied. */
export async function loadBlocks(db: Queryable, conversationId: string): Promise<Block[]> {
  return withOverlays(await db.query<OverlaidRow>(withForkPrefix(''), [conversationId]));
}

/**
 * The conversation's blocks from seq `$2` on (all without `from`), overlays applied, in order —
 * a fork's shared prefix first (store/fork-store.ts: the source's blocks up to the fork's turn, by
 * reference, the fork's own overlays over the source's). For a conversation that is not a fork
 * the second branch is one primary-key probe that finds nothing.
 */
function withForkPrefix(from: '' | 'AND b.seq >= $2'): string {
  return `SELECT block, hidden, replacement_text FROM (
       SELECT b.seq, b.block, o.hidden, o.replacement_text
         FROM timeline_blocks b
         LEFT JOIN block_overlays o ON o.conversation_id = b.conversation_id AND o.block_id = b.id
        WHERE b.conversation_id = $1 ${from}
       UNION ALL
       SELECT b.seq, b.block, coalesce(fo.hidden, so.hidden),
              CASE WHEN fo.block_id IS NOT NULL THEN fo.replacement_text ELSE so.replacement_text END
         FROM conversation_forks f JOIN timeline_blocks b ON ${FORK_PREFIX_JOIN}
         LEFT JOIN block_overlays fo ON fo.conversation_id = f.conversation_id AND fo.block_id = b.id
         LEFT JOIN block_overlays so ON so.conversation_id = b.conversation_id AND so.block_id = b.id
        WHERE f.conversation_id = $1 ${from}
     ) v ORDER BY seq`;
}

/** Loads one turn's blocks in append order, with overlays applied (what a turn's indexing reads). */
export async function loadTurnBlocks(db: Queryable, conversationId: string, turnId: string): Promise<Block[]> {
  return withOverlays(
    await db.query<OverlaidRow>(
      `SELECT b.block, o.hidden, o.replacement_text
         FROM timeline_blocks b
         LEFT JOIN block_overlays o ON o.conversation_id = b.conversation_id AND o.block_id = b.id
        WHERE b.conversation_id = $1 AND b.turn_id = $2
        ORDER BY b.seq`,
      [conversationId, turnId],
    ),
  );
}

/**
 * Loads only what the model can see: from the last `conv.range.summary` on, or from the first
 * block it kept when that comes earlier (core/compaction/view.ts), overlays applied. A round's
 * database work stays bounded by the context budget however long the conversation grows;
 * everything else stays in Postgres for `react.read`.
 */
export async function loadViewBlocks(db: Queryable, conversationId: string): Promise<Block[]> {
  return withOverlays(
    await db.query<OverlaidRow>(withForkPrefix('AND b.seq >= $2'), [
      conversationId,
      await viewStartSeq(db, conversationId),
    ]),
  );
}

/** Where the view starts: the last range summary, or the first block it kept when earlier (0: all). */
export async function viewStartSeq(db: Queryable, conversationId: string): Promise<number> {
  const start = await db.query<{ seq: string | null }>(
    `WITH s AS (
       SELECT seq, kept, cid FROM (
         SELECT seq, block->'meta'->>'kept_from_block_id' AS kept, conversation_id AS cid
           FROM timeline_blocks WHERE conversation_id = $1 AND type = 'conv.range.summary'
         UNION ALL
         SELECT b.seq, b.block->'meta'->>'kept_from_block_id', b.conversation_id
           FROM conversation_forks f JOIN timeline_blocks b ON ${FORK_PREFIX_JOIN}
          WHERE f.conversation_id = $1 AND b.type = 'conv.range.summary'
       ) x ORDER BY seq DESC LIMIT 1
     )
     SELECT LEAST((SELECT seq FROM s), (SELECT k.seq FROM timeline_blocks k, s WHERE k.conversation_id = s.cid AND k.id = s.kept)) AS seq`,
    [conversationId],
  );
  return Number(start.rows[0]?.seq ?? 0);
}

type OverlaidRow = { block: Block; hidden: boolean | null; replacement_text: string | null };

function withOverlays(res: { rows: OverlaidRow[] }): Block[] {
  return res.rows.map((r) => {
    if (r.hidden === null) return r.block;
    const out: Block = { ...r.block, hidden: r.hidden };
    if (r.replacement_text !== null) out.replacement_text = r.replacement_text;
    return out;
  });
}

export async function loadBlock(db: Queryable, conversationId: string, id: string): Promise<Block | undefined> {
  const res = await db.query<{ block: Block }>(
    `SELECT block FROM timeline_blocks WHERE conversation_id = $1 AND id = $2`,
    [conversationId, id],
  );
  return res.rows[0]?.block;
}

/** Several blocks by id in one statement (absent ids are absent from the map). */
export async function loadBlocksById(
  db: Queryable,
  conversationId: string,
  ids: string[],
): Promise<Map<string, Block>> {
  const res = await db.query<{ id: string; block: Block }>(
    `SELECT id, block FROM timeline_blocks WHERE conversation_id = $1 AND id = ANY($2::text[])`,
    [conversationId, ids],
  );
  return new Map(res.rows.map((r) => [r.id, r.block]));
}

/** Number of blocks in the conversation's timeline. */
export async function countBlocks(db: Queryable, conversationId: string): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM timeline_blocks WHERE conversation_id = $1`,
    [conversationId],
  );
  return res.rows[0]?.n ?? 0;
}

/**
 * Sets hide/prune overlays (upsert per block), atomically: one statement, so a failing row
 * leaves none of the batch behind. A block named twice keeps its last overlay.
 */
export async function setOverlays(
  db: Queryable,
  conversationId: string,
  overlays: Array<{ blockId: string; hidden: boolean; replacementText?: string; reason: string }>,
): Promise<void> {
  const last = new Map(overlays.map((o) => [o.blockId, o]));
  if (last.size === 0) return;
  const rows = [...last.values()].map((o) => ({
    block_id: o.blockId,
    hidden: o.hidden,
    replacement_text: o.replacementText ?? null,
    reason: o.reason,
  }));
  // The same statement bumps the conversation's overlay_seq (cached views reload their overlays).
  await db.query(
    `WITH bump AS (UPDATE conversations SET overlay_seq = overlay_seq + 1 WHERE id = $1)
     INSERT INTO block_overlays (conversation_id, block_id, hidden, replacement_text, reason)
     SELECT $1, o.block_id, o.hidden, o.replacement_text, o.reason
       FROM jsonb_to_recordset($2::jsonb) AS o(block_id text, hidden boolean, replacement_text text, reason text)
     ON CONFLICT (conversation_id, block_id) DO UPDATE SET hidden = EXCLUDED.hidden, replacement_text = EXCLUDED.replacement_text, reason = EXCLUDED.reason`,
    [conversationId, jsonForPostgres(rows)],
  );
}

/** Ids of the blocks whose overlay carries `reason` (e.g. what one react.hide call touched). */
export async function overlayBlockIds(db: Queryable, conversationId: string, reason: string): Promise<string[]> {
  const res = await db.query<{ block_id: string }>(
    `SELECT block_id FROM block_overlays WHERE conversation_id = $1 AND reason = $2 ORDER BY block_id`,
    [conversationId, reason],
  );
  return res.rows.map((r) => r.block_id);
}

export { FILE_ARTIFACT_KIND, getArtifact, listArtifacts, putArtifact, type ArtifactRow } from './artifact-store';
