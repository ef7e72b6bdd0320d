/**
 * Storage statistics on real Postgres: table sizes after a synthetic timeline, and the explaining
 * pool reporting the executed plans of the real store functions (auto_explain).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { analyze, openExplainingPool, seedSyntheticTimeline, tableSizes } from '../../../store/storage-stats';
import { loadBlock, loadViewBlocks } from '../../../store/timeline-store';
import { readEvents } from '../../../store/stream-bus';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_storage').toLowerCase() });
  await migrate(db);
  await seedSyntheticTimeline(db, { conversations: 20, blocksPerConversation: 500, summaryEvery: 250, prefix: 's_' });
  await analyze(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

test('table sizes count the synthetic timeline, its turns, stream events and ledger rows', async () => {
  const sizes = new Map((await tableSizes(db)).map((s) => [s.table, s]));
  assert.equal(sizes.get('timeline_blocks')?.rows, 10_000);
  assert.equal(sizes.get('turns')?.rows, 1_000);
  assert.equal(sizes.get('stream_events')?.rows, 2_000);
  assert.equal(sizes.get('usage_ledger')?.rows, 2_000);
  const blocks = sizes.get('timeline_blocks')!;
  assert.ok(blocks.heapBytes > 0 && blocks.indexBytes > 0);
  assert.equal(blocks.totalBytes, blocks.heapBytes + blocks.toastBytes + blocks.indexBytes);
  assert.ok(!sizes.has('pgmigrations'));
});

test('the explaining pool reports the executed plan of each store call; the view loads from the last summary', async () => {
  const explaining = openExplainingPool(db);
  try {
    const block = await loadBlock(explaining.pool, 's_7', 'blk_syn_302');
    assert.equal(block?.type, 'react.tool.result');
    const [plan] = explaining.take();
    assert.match(plan!.query, /FROM timeline_blocks WHERE conversation_id = \$1 AND id = \$2/);
    assert.deepEqual(plan!.nodes, ['Index Scan timeline_blocks (timeline_blocks_pkey)']);

    // The summary at block 500 keeps from block 450: the view is 51 blocks, not 500.
    const view = await loadViewBlocks(explaining.pool, 's_7');
    assert.equal(view.length, 51);
    assert.ok(
      explaining
        .take()
        .flatMap((p) => p.nodes)
        .some((n) => n.includes('(timeline_blocks_summaries)')),
    );

    await readEvents(explaining.pool, 's_7', 90);
    assert.equal(explaining.take().length, 1);
    assert.deepEqual(explaining.take(), [], 'take() empties');
  } finally {
    await explaining.close();
  }
});
