/**
 * react.memsearch at scale (`npm run bench -- memsearch`): one conversation of 10 000 turns
 * (a user message and an answer each, ~1 KB, with file names and error strings mixed in) in real
 * Postgres, embeddings from the loopback stand-in (1 024 dimensions) over HTTP.
 *
 * - indexing throughput: the real indexTurnMemory activity, lexical and with embeddings, over
 *   the first turns; the rest is bulk-loaded with the same store function;
 * - storage per turn: the index table, its TOAST and indexes (and the embeddings' share);
 * - query latency p50/p95 of the real memsearch function: lexical (goal ≤ 30 ms p95) and hybrid
 *   (goal ≤ 80 ms p95, including the embeddings call).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { percentile } from './stats';
import { openDb, migrate, dropSchema } from '../store/db';
import { appendBlocks, ensureConversation } from '../store/timeline-store';
import { memoryIndexStats, upsertMemoryEntries } from '../store/memory-store';
import { pgToolStore } from '../store/tool-store';
import { memoryEntries } from '../core/memory/entries';
import { makeBlock, type Block } from '../core/timeline/block';
import { paths } from '../core/timeline/paths';
import { makeIndexTurnMemory } from '../activities/memory/index-turn';
import { memsearch } from '../activities/memory/search';
import { createHttpEmbeddingProvider, unitLength } from '../activities/memory/embeddings';
import type { ActivityDeps } from '../activities/deps';
import { startEmbeddingsStandin, standinEmbedding } from '../test/support/embeddings-standin';

const TURNS = 10_000;
const ACTIVITY_TURNS = 300;
const QUERIES = 200;
const DIMENSIONS = 1_024;
const NOW = new Date('2026-06-01T00:00:00.000Z');

/** Deterministic text: a Zipf-ish vocabulary of pseudo-words plus identifiers people search for. */
function corpus(seed: number) {
  let s = seed >>> 0;
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const syll = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'den', 'par', 'gul', 'ost', 'ber', 'fin'];
  const vocab = Array.from({ length: 4_000 }, (_, i) => {
    let w = '';
    for (let n = 2 + (i % 3); n > 0; n--) w += syll[Math.floor(rand() * syll.length)];
    return `${w}${i % 7 === 0 ? 'ing' : ''}`;
  });
  const word = () => vocab[Math.floor(vocab.length * Math.pow(rand(), 2.2))]!;
  const rareWord = () => vocab[Math.floor(vocab.length * rand())]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  const ident = (i: number) =>
    i % 5 === 0
      ? ` error in module_${i % 997}.py: KeyError '${vocab[i % 4_000]}'`
      : i % 3 === 0
        ? ` see report_${i}.md`
        : '';
  return { rand, word, rareWord, sentence, ident };
}

function turnBlocks(i: number, text: ReturnType<typeof corpus>): Block[] {
  const turnId = `turn_${i}`;
  const ts = new Date(NOW.getTime() - (TURNS - i) * 600_000).toISOString();
  return [
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: turnId,
      ts,
      path: paths.userPrompt(turnId),
      text: `${text.sentence(30)}?${text.ident(i)}`,
    }),
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: turnId,
      ts,
      path: paths.completion(turnId),
      text: `${text.sentence(120)}.`,
    }),
  ];
}

export async function benchMemsearch(): Promise<Record<string, number | string>> {
  const db = openDb({ schema: `bench_memsearch_${process.pid}` });
  await migrate(db);
  const standin = await startEmbeddingsStandin('standin-1024', DIMENSIONS, true);
  const embedder = createHttpEmbeddingProvider({ baseURL: standin.baseURL, model: standin.model });
  const conv = 'bench-memsearch';
  const text = corpus(42);
  const figures: Record<string, number | string> = { turns: TURNS, entries_per_turn: 2, dimensions: DIMENSIONS };
  try {
    await ensureConversation(db.pool, conv);
    for (let start = 1; start <= TURNS; start += 500) {
      const blocks: Block[] = [];
      for (let i = start; i < Math.min(start + 500, TURNS + 1); i++) blocks.push(...turnBlocks(i, text));
      await appendBlocks(db.pool, conv, blocks);
    }

    // Indexing through the activity: lexical only, then with embeddings (re-indexing is an upsert).
    const env = new MockActivityEnvironment();
    const deps = (withEmbeddings: boolean) =>
      ({ db, now: () => NOW, ...(withEmbeddings ? { embeddings: embedder } : {}) }) as ActivityDeps;
    for (const [label, withEmbeddings] of [
      ['lexical', false],
      ['with_embeddings', true],
    ] as const) {
      const index = makeIndexTurnMemory(deps(withEmbeddings));
      const t0 = performance.now();
      for (let i = 1; i <= ACTIVITY_TURNS; i++)
        await env.run(index, { conversationId: conv, turnId: `turn_${i}`, turnIndex: i });
      const ms = performance.now() - t0;
      figures[`index_activity_${label}_turns_per_s`] = Math.round((ACTIVITY_TURNS / ms) * 1000);
      figures[`index_activity_${label}_ms_per_turn`] = Number((ms / ACTIVITY_TURNS).toFixed(2));
    }
    // The rest in bulk (same store function, 100 turns a statement), vectors computed in process.
    const bulk0 = performance.now();
    for (let start = ACTIVITY_TURNS + 1; start <= TURNS; start += 100) {
      const entries = [];
      for (let i = start; i < Math.min(start + 100, TURNS + 1); i++)
        entries.push(...memoryEntries(turnBlocks(i, corpus(42 + i)), `turn_${i}`, i));
      const vectors = entries.map((e) => unitLength(standinEmbedding(e.text, DIMENSIONS, true)));
      await upsertMemoryEntries(db.pool, conv, entries, { model: standin.model, vectors });
    }
    figures.index_bulk_turns_per_s = Math.round(((TURNS - ACTIVITY_TURNS) / (performance.now() - bulk0)) * 1000);
    const r = await memoryIndexStats(db.pool);
    figures.entries = r.entries;
    figures.storage_bytes_per_turn = Math.round(r.totalBytes / TURNS);
    figures.storage_index_bytes_per_turn = Math.round(r.indexBytes / TURNS);
    figures.storage_embedding_bytes_per_turn = Math.round(r.avgEmbeddingBytes * 2);
    figures.storage_tsvector_bytes_per_turn = Math.round(r.avgTsvectorBytes * 2);

    // Queries as people search: two or three words of the corpus (one of them often common), an
    // identifier (file name, error string) one time in ten, a quoted phrase one time in five.
    const q = corpus(7);
    const queries = Array.from({ length: QUERIES }, (_, i) =>
      i % 10 === 0
        ? `module_${i % 997}.py`
        : i % 5 === 0
          ? `"${q.word()} ${q.word()}"`
          : `${q.word()} ${q.rareWord()}${i % 2 ? ` ${q.rareWord()}` : ''}`,
    );
    const memory = pgToolStore(db.pool, conv).memory;
    const params = (query: string) => ({ query, top_k: 5, days: 3_650 });
    for (const [label, withEmbeddings] of [
      ['lexical', false],
      ['hybrid', true],
    ] as const) {
      const cold0 = performance.now();
      await memsearch(memory, params(queries[1]!), NOW, withEmbeddings ? embedder : undefined);
      // The first hybrid query loads the conversation's vectors into the worker's cache.
      figures[`query_${label}_first_cold_ms`] = Number((performance.now() - cold0).toFixed(1));
      for (const query of queries.slice(0, 20))
        await memsearch(memory, params(query), NOW, withEmbeddings ? embedder : undefined); // warm-up
      const times: number[] = [];
      let hits = 0;
      const slow: Array<[number, string]> = [];
      for (const query of queries) {
        const t0 = performance.now();
        const out = await memsearch(memory, params(query), NOW, withEmbeddings ? embedder : undefined);
        times.push(performance.now() - t0);
        slow.push([times.at(-1)!, query]);
        if (out.results.length > 0) hits++;
      }
      if (process.env.BENCH_VERBOSE) console.log(label, slow.sort((a, b) => b[0] - a[0]).slice(0, 8));
      figures[`query_${label}_p50_ms`] = percentile(times, 50);
      figures[`query_${label}_p95_ms`] = percentile(times, 95);
      figures[`query_${label}_with_hits`] = `${hits}/${QUERIES}`;
    }
    figures.goals = 'p95 lexical ≤ 30 ms, hybrid ≤ 80 ms';
    return figures;
  } finally {
    await standin.stop();
    if (process.env.BENCH_KEEP) console.log(`kept schema ${db.schema}`);
    else await dropSchema(db);
    await db.close();
  }
}
