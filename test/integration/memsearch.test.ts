/**
 * react.memsearch end to end.
 *
 * 1. A relevance table over a 30-turn conversation spread over 30 days (real Postgres; turns
 *    indexed by the real indexTurnMemory activity; semantic half through a stand-in embeddings
 *    server on loopback, over HTTP): exact phrase, file name and error string verbatim,
 *    paraphrase (semantic only), ordinal and time queries, target filters, a compacted turn found
 *    and restored with react.read, another conversation never seen, the embeddings service down.
 * 2. A real turn on Temporal whose model calls react.memsearch and finds an earlier turn that
 *    PersistTurnWorkflow indexed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { appendBlocks, ensureConversation, loadBlocks } from '../../store/timeline-store';
import { commitCompactionBatch } from '../../store/compaction-store';
import { compactionBatch } from '../../core/compaction/outputs';
import { makeBlock } from '../../core/timeline/block';
import { paths } from '../../core/timeline/paths';
import { makeIndexTurnMemory } from '../../activities/memory/index-turn';
import { createHttpEmbeddingProvider, type EmbeddingProvider } from '../../activities/memory/embeddings';
import { createMemsearchImpl } from '../../activities/tools/react-memsearch';
import { reactReadImpl } from '../../activities/tools/react-read';
import type { ActivityDeps } from '../../activities/deps';
import { ReactMemsearchParamsSchema } from '../../core/tools/memory-tools';
import { toolContext } from '../support/tool-context';
import { NOW, tsOf, turnBlocks } from '../support/memory-corpus';
import { startEmbeddingsStandin, type EmbeddingsStandin } from '../support/embeddings-standin';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';

let db: Db;
let standin: EmbeddingsStandin;
let embedder: EmbeddingProvider;
const CONV = uniqueId('conv_mem');
const OTHER = uniqueId('conv_other');

function deps(withEmbeddings: EmbeddingProvider | undefined): ActivityDeps {
  return { db, now: () => NOW, ...(withEmbeddings ? { embeddings: withEmbeddings } : {}) } as ActivityDeps;
}

const ctxFor = (conversationId: string, callId: string, turnId = 'turn_31') =>
  toolContext(db.pool, { conversationId, callId, turnId, now: NOW });

interface Hit {
  turn_id: string;
  target: string;
  path: string;
  snippet: string;
  matched: string[];
}
async function search(
  params: Record<string, unknown>,
  opts: { semantic?: boolean; conv?: string } = {},
): Promise<{ mode: string; results: Hit[]; interpreted: Record<string, unknown> }> {
  const impl = createMemsearchImpl(opts.semantic === false ? undefined : embedder);
  const out = await impl.run(ReactMemsearchParamsSchema.parse(params), ctxFor(opts.conv ?? CONV, 'tc_memsearch0001'));
  assert.ok(out.ok, out.text);
  return JSON.parse(out.text);
}

describe('react.memsearch over a 30-turn conversation', () => {
  before(async () => {
    db = openDb({ schema: uniqueId('t_memsearch').toLowerCase() });
    await migrate(db);
    standin = await startEmbeddingsStandin();
    embedder = createHttpEmbeddingProvider({ baseURL: standin.baseURL, model: standin.model });
    await ensureConversation(db.pool, CONV);
    const env = new MockActivityEnvironment();
    const index = makeIndexTurnMemory(deps(embedder));
    for (let i = 1; i <= 30; i++) {
      await appendBlocks(db.pool, CONV, turnBlocks(i));
      const r = (await env.run(index, { conversationId: CONV, turnId: `turn_${i}`, turnIndex: i })) as Awaited<
        ReturnType<typeof index>
      >;
      assert.equal(r.embedded, true);
    }
    // Turn 21 compacted turns 1–20 out of view (the real compaction batch and commit).
    const blocks = await loadBlocks(db.pool, CONV);
    const covered = blocks.filter((b) => Number(b.turn_id.slice(5)) <= 20);
    const compactionId = 'turn_21/compact/1';
    const batch = compactionBatch({
      compactionId,
      turnId: 'turn_21',
      ts: tsOf(21),
      blocks,
      coveredIds: covered.map((b) => b.id),
      coveredTurnIds: [...new Set(covered.map((b) => b.turn_id))],
      keptFromId: blocks.find((b) => b.turn_id === 'turn_21')!.id,
      summary: 'Earlier: travel planning, a billing bug, baking, deployments, a report, a login incident, naming.',
      tokensBefore: 4000,
      tokensAfter: 400,
    });
    await commitCompactionBatch(db.pool, CONV, compactionId, batch);
    await env.run(index, { conversationId: CONV, turnId: 'turn_21', turnIndex: 21 });
    // Another conversation (another user's) mentions the same file: never returned.
    await ensureConversation(db.pool, OTHER);
    await appendBlocks(db.pool, OTHER, [
      makeBlock({
        type: 'user.prompt',
        author: 'user',
        turn_id: 'turn_1',
        ts: tsOf(30),
        path: paths.userPrompt('turn_1'),
        text: 'billing_export.py is also broken for me, KeyError again',
      }),
    ]);
    await env.run(index, { conversationId: OTHER, turnId: 'turn_1', turnIndex: 1 });
  });
  after(async () => {
    await standin.stop();
    await dropSchema(db);
    await db.close();
  });

  // query → the turn expected first (lexical mode: no embeddings).
  const lexicalTable: Array<[string, Record<string, unknown>, string]> = [
    ['exact phrase', { query: '"blue-green deployment"' }, 'turn_7'],
    ['file name verbatim', { query: 'billing_export.py' }, 'turn_3'],
    ['error string verbatim', { query: "KeyError: 'invoice_id'" }, 'turn_3'],
    ['stemmed words (english analyser)', { query: 'deploying canaries' }, 'turn_7'],
    ['attachment text, target filter', { query: 'revenue APAC', targets: ['attachment'] }, 'turn_9'],
    ['agent notes, target filter', { query: 'who owns Heron', targets: ['notes'] }, 'turn_15'],
    ['the first message', { query: 'the first message' }, 'turn_1'],
    ['turn 3 by number', { query: 'turn 3' }, 'turn_3'],
    ['yesterday', { query: 'what did we do yesterday' }, 'turn_29'],
    ['from/to turn bounds', { query: 'part', from: 'turn_20', to: 23, order: 'oldest' }, 'turn_20'],
    ['the compaction summary', { query: 'login incident', targets: ['summary'] }, 'turn_21'],
  ];
  for (const [name, params, expected] of lexicalTable)
    test(`lexical: ${name} → ${expected}`, async () => {
      const out = await search(params, { semantic: false });
      assert.equal(out.mode, 'lexical');
      assert.equal(out.results[0]?.turn_id, expected, JSON.stringify(out, null, 1));
    });

  test('targets exclude other kinds; top_k caps; days excludes old turns', async () => {
    const users = await search({ query: 'Lisbon', targets: ['user'] }, { semantic: false });
    assert.deepEqual(
      users.results.map((r) => r.target),
      ['user'],
    );
    const capped = await search({ query: 'part', top_k: 3 }, { semantic: false });
    assert.equal(capped.results.length, 3);
    const recent = await search({ query: 'Lisbon trip', days: 7 }, { semantic: false });
    assert.deepEqual(recent.results, [], 'turn 1 is 29 days old');
  });

  test('paraphrase: only the semantic half finds it; hybrid ranks it first', async () => {
    const query = 'authentication screen hang';
    const lexical = await search({ query }, { semantic: false });
    assert.ok(!lexical.results.some((r) => r.turn_id === 'turn_12'), JSON.stringify(lexical.results));
    const hybrid = await search({ query });
    assert.equal(hybrid.mode, 'hybrid');
    assert.equal(hybrid.results[0]?.turn_id, 'turn_12');
    assert.deepEqual(hybrid.results[0]?.matched, ['semantic']);
    // Exact matches keep their place in hybrid mode too.
    const exact = await search({ query: 'billing_export.py' });
    assert.equal(exact.results[0]?.turn_id, 'turn_3');
    assert.ok(exact.results[0]!.matched.includes('lexical'));
  });

  test('a compacted turn is found and restored with react.read', async () => {
    const out = await search({ query: 'sourdough hydration' });
    const hit = out.results.find((r) => r.turn_id === 'turn_5' && r.target === 'user');
    assert.ok(hit, JSON.stringify(out.results));
    assert.equal(hit.path, 'ar:turn_5.user.prompt');
    const read = await reactReadImpl.run({ paths: [hit.path], items: [] }, ctxFor(CONV, 'tc_memread00001'));
    const head = JSON.parse(read.text.split('\n\n')[0]!);
    assert.equal(head.results[0].status, 'ok', 'compacted out of view: react.read loads it again');
    assert.match(read.text, /Which sourdough hydration should I start with\?/);
  });

  test('never across conversations', async () => {
    const mine = await search({ query: 'billing_export.py KeyError' });
    assert.ok(
      mine.results.every((r) => r.turn_id !== 'turn_1'),
      'the other conversation has the only turn_1 mention',
    );
    const theirs = await search({ query: 'billing_export.py' }, { conv: OTHER });
    assert.deepEqual(
      theirs.results.map((r) => r.turn_id),
      ['turn_1'],
    );
  });

  test('the embeddings service down: memsearch degrades to lexical and says why', async () => {
    standin.down = true;
    try {
      const out = await search({ query: 'billing_export.py' });
      assert.equal(out.mode, 'lexical');
      assert.match(String(out.interpreted['semantic_error']), /503/);
      assert.equal(out.results[0]?.turn_id, 'turn_3');
    } finally {
      standin.down = false;
    }
  });

  test('re-indexing a turn is idempotent', async () => {
    const before = await db.pool.query(`SELECT count(*)::int AS n FROM memory_entries WHERE conversation_id = $1`, [
      CONV,
    ]);
    await new MockActivityEnvironment().run(makeIndexTurnMemory(deps(embedder)), {
      conversationId: CONV,
      turnId: 'turn_3',
      turnIndex: 3,
    });
    const after = await db.pool.query(`SELECT count(*)::int AS n FROM memory_entries WHERE conversation_id = $1`, [
      CONV,
    ]);
    assert.equal(after.rows[0].n, before.rows[0].n);
  });
});

describe('react.memsearch in a real turn', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('memsearch');
    await stack.startWorker();
  });
  after(async () => {
    await stack.teardown();
  });

  test('turn 2 finds what turn 1 said (indexed by PersistTurnWorkflow)', async () => {
    const conv = uniqueId('conv');
    await stack.client.startTurn(conv, 'Remember the code word PELICAN-42 for the vault.', {
      model: { provider: 'scripted', script: { rounds: [complete('Noted: PELICAN-42.')] } },
    });
    await stack.client.result(conv, 1);
    await waitFor('turn 1 indexed', async () => {
      const r = await stack.db.pool.query(
        `SELECT count(*)::int AS n FROM memory_entries WHERE conversation_id = $1 AND turn_id = 'turn_1'`,
        [conv],
      );
      return r.rows[0].n >= 2;
    });
    await waitFor('turn 1 released', async () => (await stack.client.conversationState(conv)).activeTurn === null);
    await stack.client.startTurn(conv, 'What was the vault code word?', {
      model: {
        provider: 'scripted',
        script: {
          rounds: [callTool('react.memsearch', { query: 'vault code word' }), complete('It was PELICAN-42.')],
        },
      },
    });
    const r = await stack.client.result(conv, 2);
    assert.equal(r.completionPath, 'complete', JSON.stringify(r));
    const result = (await loadBlocks(stack.db.pool, conv)).find(
      (b) => b.type === 'react.tool.result' && b.turn_id === 'turn_2',
    );
    assert.ok(result, 'the memsearch result is on the timeline');
    const payload = JSON.parse(result.text!.split('\n\n')[0]!);
    assert.equal(payload.mode, 'lexical');
    assert.equal(payload.results[0].turn_id, 'turn_1');
    assert.equal(payload.results[0].path, 'ar:turn_1.user.prompt');
    assert.match(payload.results[0].snippet, /PELICAN-42/);
  });
});
