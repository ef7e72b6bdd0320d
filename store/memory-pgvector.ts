/**
 * react.memsearch's semantic half on pgvector, where the extension exists (migration
 * 1764300000003 adds `memory_entries.embedding_vec`): vectors go to that column, each model and
 * dimension gets a partial HNSW index (cosine; `halfvec` above 2 000 dimensions) on first use, and a search orders the
 * conversation's entries by cosine distance with pgvector's iterative index scan (filtered
 * searches keep scanning the graph until enough rows of this conversation pass). Without the
 * column, store/memory-vectors.ts scans exactly in the worker.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { withTransaction, type Queryable } from './db';
import { COLUMNS, hit, memoryFilterSql, type MemoryFilter, type MemoryHit } from './memory-rows';

/** Per database handle: the schema of the vector extension when memory entries have the column, else null. */
const support = new WeakMap<object, Promise<string | null>>();
const indexed = new WeakMap<object, Set<string>>();

export function pgvectorSchema(db: Queryable): Promise<string | null> {
  let found = support.get(db);
  if (!found) {
    found = db
      .query(
        `SELECT n.nspname AS schema
           FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
          WHERE e.extname = 'vector'
            AND EXISTS (SELECT 1 FROM information_schema.columns
                         WHERE table_schema = current_schema() AND table_name = 'memory_entries'
                           AND column_name = 'embedding_vec')`,
      )
      .then((r) => (r.rows[0]?.schema as string | undefined) ?? null);
    support.set(db, found);
    // A failed probe is not remembered: the next call asks again.
    found.catch(() => support.delete(db));
  }
  return found;
}

/**
 * The type a model's vectors are indexed and compared as: pgvector's HNSW takes `vector` up to
 * 2 000 dimensions and `halfvec` up to 4 000; beyond that the search is an exact scan in SQL.
 */
function indexedAs(schema: string, dims: number): { cast: string; ops: string } | undefined {
  if (dims <= 2_000) return { cast: `${schema}.vector(${dims})`, ops: `${schema}.vector_cosine_ops` };
  if (dims <= 4_000) return { cast: `${schema}.halfvec(${dims})`, ops: `${schema}.halfvec_cosine_ops` };
  return undefined;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
const vectorText = (v: readonly number[]) => `[${v.join(',')}]`;

/** The partial HNSW index of one model and dimension (created once per database handle). */
async function ensureIndex(db: Queryable, schema: string, model: string, dims: number): Promise<void> {
  const key = `${model}\u0000${dims}`;
  let done = indexed.get(db);
  if (!done) indexed.set(db, (done = new Set()));
  if (done.has(key)) return;
  const s = ident(schema);
  const as = indexedAs(s, dims);
  const name = `memory_entries_hnsw_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
  if (as)
    await db.query(
      `CREATE INDEX IF NOT EXISTS ${name} ON memory_entries
         USING hnsw ((embedding_vec::${as.cast}) ${as.ops})
         WHERE embedding_model = ${literal(model)} AND ${s}.vector_dims(embedding_vec) = ${dims}`,
    );
  done.add(key);
}

/** Stores entries' vectors in the pgvector column (the entries exist: upsertMemoryEntries wrote them). */
export async function storePgvectors(
  db: Queryable,
  schema: string,
  conversationId: string,
  keys: readonly string[],
  embeddings: { model: string; vectors: ReadonlyArray<readonly number[]> },
): Promise<void> {
  const s = ident(schema);
  await db.query(
    `UPDATE memory_entries m SET embedding_vec = v.vec::${s}.vector
       FROM unnest($2::text[], $3::text[]) AS v(key, vec)
      WHERE m.conversation_id = $1 AND m.entry_key = v.key`,
    [conversationId, [...keys], embeddings.vectors.map(vectorText)],
  );
  for (const dims of new Set(embeddings.vectors.map((v) => v.length)))
    await ensureIndex(db, schema, embeddings.model, dims);
}

/** Entries nearest to a unit-length query vector by cosine, best first, above `minSimilarity`. */
export async function pgvectorMemorySearch(
  pool: Pool,
  schema: string,
  conversationId: string,
  vector: readonly number[],
  model: string,
  filter: MemoryFilter,
  limit: number,
  minSimilarity = 0,
): Promise<MemoryHit[]> {
  const s = ident(schema);
  const dims = vector.length;
  const w = memoryFilterSql(filter, 5);
  const cast = indexedAs(s, dims)?.cast ?? `${s}.vector(${dims})`;
  const distance = `embedding_vec::${cast} OPERATOR(${s}.<=>) $2::${cast}`;
  const rows = await withTransaction(pool, async (tx) => {
    await tx.query(
      `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '200', true)`,
    );
    const res = await tx.query(
      `SELECT ${COLUMNS}, 1 - (${distance}) AS sim
         FROM memory_entries
        WHERE conversation_id = $1 AND embedding_model = $4 AND ${s}.vector_dims(embedding_vec) = ${dims} ${w.sql}
        ORDER BY ${distance}
        LIMIT $3`,
      [conversationId, vectorText(vector), limit, model, ...w.params],
    );
    return res.rows;
  });
  // relaxed_order may return neighbours slightly out of order: sort by similarity again.
  return rows
    .map((r) => hit(r, r.sim))
    .filter((h) => h.raw > minSimilarity)
    .sort((a, b) => b.raw - a.raw || Date.parse(b.ts) - Date.parse(a.ts));
}
