/**
 * react.memsearch on pgvector: PGlite (the embedded stack's database) with the pgvector
 * extension, served on loopback and reached through the real `pg` driver, like `dreact dev`.
 * The migration creates the extension and the column; indexing stores vectors in it and creates
 * the model's HNSW index; semantic search orders by cosine distance through that index.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { openDb, migrate, type Db } from '../../store/db';
import { appendBlocks, ensureConversation } from '../../store/timeline-store';
import { pgvectorSchema } from '../../store/memory-pgvector';
import { makeIndexTurnMemory } from '../../activities/memory/index-turn';
import { createHttpEmbeddingProvider, type EmbeddingProvider } from '../../activities/memory/embeddings';
import { memsearch } from '../../activities/memory/search';
import type { ActivityDeps } from '../../activities/deps';
import { pgToolStore } from '../../store/tool-store';
import { freePort } from '../../apps/stack/embedded';
import { NOW, turnBlocks } from '../support/memory-corpus';
import { startEmbeddingsStandin, type EmbeddingsStandin } from '../support/embeddings-standin';

let pg: PGlite;
let server: PGLiteSocketServer;
let db: Db;
let standin: EmbeddingsStandin;
let embedder: EmbeddingProvider;
const CONV = 'conv_pgvector';

before(async () => {
  pg = await PGlite.create({ extensions: { vector } });
  const port = await freePort(56432);
  server = new PGLiteSocketServer({ db: pg, port, host: '127.0.0.1', maxConnections: 8 });
  await server.start();
  db = openDb({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, max: 4 });
  await migrate(db);
  standin = await startEmbeddingsStandin();
  embedder = createHttpEmbeddingProvider({ baseURL: standin.baseURL, model: standin.model });
  await ensureConversation(db.pool, CONV);
  const env = new MockActivityEnvironment();
  const index = makeIndexTurnMemory({ db, now: () => NOW, embeddings: embedder } as ActivityDeps);
  for (let i = 1; i <= 30; i++) {
    await appendBlocks(db.pool, CONV, turnBlocks(i));
    await env.run(index, { conversationId: CONV, turnId: `turn_${i}`, turnIndex: i });
  }
});
after(async () => {
  await standin?.stop();
  await db?.close();
  await server?.stop();
  await pg?.close();
});

test('the migration created pgvector and its column; vectors are stored there with the model HNSW index', async () => {
  assert.equal(await pgvectorSchema(db.pool), 'public');
  const stored = await db.pool.query(
    `SELECT count(*) FILTER (WHERE embedding_vec IS NOT NULL)::int AS vec, count(*) FILTER (WHERE embedding IS NOT NULL)::int AS bytes,
            count(*)::int AS total FROM memory_entries WHERE conversation_id = $1`,
    [CONV],
  );
  assert.deepEqual(stored.rows[0], { vec: stored.rows[0].total, bytes: 0, total: stored.rows[0].total });
  const indexes = await db.pool.query(
    `SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_entries' AND indexname LIKE 'memory_entries_hnsw_%'`,
  );
  assert.equal(indexes.rows.length, 1);
  // The stand-in's 2 048 dimensions exceed HNSW's 2 000 for `vector`: indexed as halfvec.
  assert.match(indexes.rows[0].indexdef, /USING hnsw .*halfvec\(2048\).*halfvec_cosine_ops.*WHERE/);
});

test('semantic search runs on pgvector: a paraphrase found, filters applied, the HNSW index usable', async () => {
  const memory = pgToolStore(db.pool, CONV).memory;
  const params = { query: 'authentication screen hang', top_k: 5, days: 365 };
  const lexical = await memsearch(memory, params, NOW);
  assert.ok(!lexical.results.some((r) => r.turn_id === 'turn_12'));
  const hybrid = await memsearch(memory, params, NOW, embedder);
  assert.equal(hybrid.semantic, true);
  assert.equal(hybrid.results[0]?.turn_id, 'turn_12');
  assert.deepEqual(hybrid.results[0]?.matched, ['semantic']);
  const answersOnly = await memsearch(memory, { ...params, targets: ['assistant'] }, NOW, embedder);
  assert.ok(answersOnly.results.every((r) => r.target === 'assistant'));

  // The search's ordering expression and the model's predicate match the partial HNSW index (for
  // one conversation's few rows the planner may prefer its btree; across many, the HNSW index).
  const [q] = await embedder.embed(['authentication screen hang']);
  const plan = await db.pool.connect();
  try {
    await plan.query('BEGIN');
    await plan.query('SET LOCAL enable_seqscan = off');
    const dims = q!.length;
    const explained = await plan.query(
      `EXPLAIN SELECT entry_key FROM memory_entries
        WHERE embedding_model = $2 AND public.vector_dims(embedding_vec) = ${dims}
        ORDER BY embedding_vec::public.halfvec(${dims}) OPERATOR(public.<=>) $1::public.halfvec(${dims}) LIMIT 5`,
      [`[${q!.join(',')}]`, standin.model],
    );
    await plan.query('ROLLBACK');
    assert.match(explained.rows.map((r) => r['QUERY PLAN']).join('\n'), /Index Scan using memory_entries_hnsw_/);
  } finally {
    plan.release();
  }
});
