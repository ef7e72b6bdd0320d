/**
 * The knowledge space in Postgres: documents (extracted text, content hash) and their chunks,
 * synchronised with the configured folder in one transaction (unchanged documents untouched,
 * removed ones deleted), searched with the same two-analyser query as react.memsearch.
 */
import { withTransaction, type Db, type Queryable } from './db';
import { searchTerms } from './memory-store';

export interface KnowledgeDocument {
  path: string;
  sha256: string;
  mime: string;
  title: string;
  text: string;
  sizeBytes: number;
  chunks: string[];
}

export interface KnowledgeHit {
  path: string;
  title: string;
  chunk: number;
  text: string;
  rank: number;
}

/** Content hashes of the space's documents, by path. */
export async function knowledgeHashes(db: Queryable, space: string): Promise<Map<string, string>> {
  const res = await db.query(`SELECT path, sha256 FROM knowledge_documents WHERE space = $1`, [space]);
  return new Map(res.rows.map((r) => [r.path as string, r.sha256 as string]));
}

/**
 * Makes the space hold exactly `present` paths: `changed` documents are (re)written with their
 * chunks; paths neither present nor changed are removed.
 */
export async function syncKnowledge(
  db: Db,
  space: string,
  changed: readonly KnowledgeDocument[],
  present: readonly string[],
): Promise<{ written: number; removed: number }> {
  return withTransaction(db.pool, async (tx) => {
    const removed = await tx.query(
      `DELETE FROM knowledge_documents WHERE space = $1 AND NOT (path = ANY($2::text[]))`,
      [space, [...present]],
    );
    for (const d of changed) {
      await tx.query(
        `INSERT INTO knowledge_documents (space, path, sha256, mime, title, text, size_bytes)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (space, path) DO UPDATE SET sha256 = EXCLUDED.sha256, mime = EXCLUDED.mime,
           title = EXCLUDED.title, text = EXCLUDED.text, size_bytes = EXCLUDED.size_bytes, indexed_at = now()`,
        [space, d.path, d.sha256, d.mime, d.title, d.text, d.sizeBytes],
      );
      await tx.query(`DELETE FROM knowledge_chunks WHERE space = $1 AND path = $2`, [space, d.path]);
      await tx.query(
        `INSERT INTO knowledge_chunks (space, path, chunk, text)
         SELECT $1, $2, c.ord - 1, c.text FROM unnest($3::text[]) WITH ORDINALITY AS c(text, ord)`,
        [space, d.path, d.chunks],
      );
    }
    return { written: changed.length, removed: removed.rowCount ?? 0 };
  });
}

/** The best chunk of each matching document, best documents first. */
export async function searchKnowledge(
  db: Queryable,
  space: string,
  query: string,
  limit: number,
): Promise<KnowledgeHit[]> {
  const res = await db.query(
    `${searchTerms('$2')}, ranked AS (
       SELECT c.path, c.chunk, c.text, ts_rank_cd(c.tsv, l.loose, 32) + ts_rank_cd(c.tsv, l.strict, 32) AS rank,
              row_number() OVER (PARTITION BY c.path ORDER BY ts_rank_cd(c.tsv, l.loose, 32) + ts_rank_cd(c.tsv, l.strict, 32) DESC, c.chunk) AS n
         FROM knowledge_chunks c, l
        WHERE c.space = $1 AND numnode(l.loose) > 0 AND c.tsv @@ l.loose
     )
     SELECT r.path, d.title, r.chunk, r.text, r.rank
       FROM ranked r JOIN knowledge_documents d ON d.space = $1 AND d.path = r.path
      WHERE r.n = 1
      ORDER BY r.rank DESC, r.path
      LIMIT $3`,
    [space, query, limit],
  );
  return res.rows.map((r) => ({
    path: r.path as string,
    title: r.title as string,
    chunk: Number(r.chunk),
    text: r.text as string,
    rank: Number(r.rank),
  }));
}

export async function getKnowledgeDocument(
  db: Queryable,
  space: string,
  path: string,
): Promise<{ text: string; mime: string; sizeBytes: number; title: string } | undefined> {
  const res = await db.query(
    `SELECT text, mime, size_bytes, title FROM knowledge_documents WHERE space = $1 AND path = $2`,
    [space, path],
  );
  const r = res.rows[0];
  return r ? { text: r.text, mime: r.mime, sizeBytes: Number(r.size_bytes), title: r.title } : undefined;
}
