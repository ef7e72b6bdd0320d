/**
 * react.memsearch's index in Postgres: idempotent upserts of a turn's entries (one statement),
 * lexical search (websearch_to_tsquery on both analysers, any term matches, ranked by
 * ts_rank_cd with all-terms matches ranked higher) and listing by time; semantic search is
 * store/memory-vectors.ts. Every query is bound to one conversation.
 */
import type { Queryable } from './db';
import type { MemoryEntry } from '../core/memory/entries';
import { COLUMNS, hit, memoryFilterSql, type MemoryFilter, type MemoryHit } from './memory-rows';
import { pgvectorSchema, storePgvectors } from './memory-pgvector';

export type { MemoryFilter, MemoryHit } from './memory-rows';

/** One conversation's index, as a tool sees it (store/tool-store.ts binds it). */
export interface MemoryIndex {
  lexical(query: string, filter: MemoryFilter, limit: number): Promise<MemoryHit[]>;
  semantic(
    vector: readonly number[],
    model: string,
    filter: MemoryFilter,
    limit: number,
    minSimilarity?: number,
  ): Promise<MemoryHit[]>;
  byTime(order: 'oldest' | 'newest', filter: MemoryFilter, limit: number): Promise<MemoryHit[]>;
}

/** A vector as stored: float32, little-endian. */
export function vectorBytes(v: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(v.length * 4);
  v.forEach((x, i) => out.writeFloatLE(x, i * 4));
  return out;
}

/** Upserts entries (and their embeddings, unit length, when given) in one statement. */
export async function upsertMemoryEntries(
  db: Queryable,
  conversationId: string,
  entries: readonly MemoryEntry[],
  embeddings?: { model: string; vectors: ReadonlyArray<readonly number[]> },
): Promise<number> {
  if (entries.length === 0) return 0;
  if (embeddings && embeddings.vectors.length !== entries.length)
    throw new Error(`upsertMemoryEntries: ${embeddings.vectors.length} vectors for ${entries.length} entries`);
  // With pgvector the vectors live in its column (and index); else as float32 bytes for the worker's scan.
  const pgvector = embeddings ? await pgvectorSchema(db) : null;
  const res = await db.query(
    `INSERT INTO memory_entries (conversation_id, entry_key, turn_id, turn_index, target, path, ts, text, anchors, embedding, embedding_model)
     SELECT $1, e.key, e.turn_id, e.turn_index, e.target, e.path, e.ts, e.text, e.anchors,
            e.embedding, $11
       FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::timestamptz[], $8::text[], $9::text[], $10::bytea[])
            AS e(key, turn_id, turn_index, target, path, ts, text, anchors, embedding)
     ON CONFLICT (conversation_id, entry_key) DO UPDATE SET
       text = EXCLUDED.text, anchors = EXCLUDED.anchors, path = EXCLUDED.path, target = EXCLUDED.target, ts = EXCLUDED.ts,
       embedding = COALESCE(EXCLUDED.embedding, memory_entries.embedding),
       embedding_model = COALESCE(EXCLUDED.embedding_model, memory_entries.embedding_model),
       revision = nextval('memory_entries_revision')`,
    [
      conversationId,
      entries.map((e) => e.key),
      entries.map((e) => e.turnId),
      entries.map((e) => e.turnIndex),
      entries.map((e) => e.target),
      entries.map((e) => e.path),
      entries.map((e) => e.ts),
      entries.map((e) => e.text),
      entries.map((e) => e.anchors),
      entries.map((_, i) => (embeddings && !pgvector ? vectorBytes(embeddings.vectors[i]!) : null)),
      embeddings?.model ?? null,
    ],
  );
  if (embeddings && pgvector)
    await storePgvectors(
      db,
      pgvector,
      conversationId,
      entries.map((e) => e.key),
      embeddings,
    );
  return res.rowCount ?? 0;
}

/**
 * The CTE `l(strict, loose)` of a web-style query (quotes, -exclusions, or) on both analysers:
 * `strict` needs every term, `loose` any; rank with `ts_rank_cd(tsv, l.loose, 32) +
 * ts_rank_cd(tsv, l.strict, 32)` so full matches come first. Shared with the knowledge space.
 */
export function searchTerms(param: string): string {
  return `WITH q AS (
       SELECT websearch_to_tsquery('simple', ${param}) || websearch_to_tsquery('english', ${param}) AS strict
     ), l AS (
       SELECT strict, replace(strict::text, ' & ', ' | ')::tsquery AS loose FROM q
     )`;
}

/**
 * Ranked candidates per match kind: the newest entries matching every term and the newest
 * matching any term (a term found in thousands of entries must not make every query rank them
 * all; recency favours the newest anyway). Rare terms — file names, error strings — stay exact.
 */
export const LEXICAL_CANDIDATES = 500;

/** Entries matching any query term on either analyser, best first. */
export async function lexicalMemorySearch(
  db: Queryable,
  conversationId: string,
  query: string,
  filter: MemoryFilter,
  limit: number,
): Promise<MemoryHit[]> {
  const w = memoryFilterSql(filter, 5);
  const m = w.sql.replace(/\b(target|turn_index|ts)\b/g, 'm.$1');
  const res = await db.query(
    `${searchTerms('$2')}, cand AS (
       (SELECT m.entry_key FROM memory_entries m, l
         WHERE m.conversation_id = $1 AND numnode(l.loose) > 0 AND m.tsv @@ l.strict ${m} ORDER BY m.ts DESC LIMIT $4)
       UNION
       (SELECT m.entry_key FROM memory_entries m, l
         WHERE m.conversation_id = $1 AND numnode(l.loose) > 0 AND m.tsv @@ l.loose ${m} ORDER BY m.ts DESC LIMIT $4)
     )
     SELECT ${COLUMNS}, ts_rank_cd(tsv, l.loose, 32) + ts_rank_cd(tsv, l.strict, 32) AS rank
       FROM memory_entries JOIN cand USING (entry_key), l
      WHERE conversation_id = $1
      ORDER BY rank DESC, ts DESC
      LIMIT $3`,
    [conversationId, query, limit, LEXICAL_CANDIDATES, ...w.params],
  );
  return res.rows.map((r) => hit(r, r.rank));
}

/** Entries in time order (oldest or newest first), for ordinal and time-only queries. */
export async function memoryByTime(
  db: Queryable,
  conversationId: string,
  order: 'oldest' | 'newest',
  filter: MemoryFilter,
  limit: number,
): Promise<MemoryHit[]> {
  const w = memoryFilterSql(filter, 3);
  const dir = order === 'oldest' ? 'ASC' : 'DESC';
  const res = await db.query(
    `SELECT ${COLUMNS} FROM memory_entries WHERE conversation_id = $1 ${w.sql}
      ORDER BY turn_index ${dir}, ts ${dir}, entry_key LIMIT $2`,
    [conversationId, limit, ...w.params],
  );
  return res.rows.map((r) => hit(r, 0));
}

/** Size of the whole index (after VACUUM ANALYZE): table with TOAST and indexes, per-entry averages. */
export async function memoryIndexStats(db: Queryable): Promise<{
  entries: number;
  totalBytes: number;
  indexBytes: number;
  avgEmbeddingBytes: number;
  avgTsvectorBytes: number;
}> {
  await db.query('VACUUM ANALYZE memory_entries');
  const res = await db.query(
    `SELECT pg_total_relation_size('memory_entries') AS total, pg_indexes_size('memory_entries') AS indexes,
            (SELECT avg(pg_column_size(embedding)) FROM memory_entries) AS embedding,
            (SELECT avg(pg_column_size(tsv)) FROM memory_entries) AS tsv,
            (SELECT count(*) FROM memory_entries) AS entries`,
  );
  const r = res.rows[0];
  return {
    entries: Number(r.entries),
    totalBytes: Number(r.total),
    indexBytes: Number(r.indexes),
    avgEmbeddingBytes: Number(r.embedding ?? 0),
    avgTsvectorBytes: Number(r.tsv ?? 0),
  };
}
