/**
 * The worker's view cache on real Postgres: after any sequence of appends, hide / prune overlays,
 * range summaries (the view moves) and a row committed late with a lower sequence number, a
 * cached load equals loadViewBlocks — and a warm round reads only the new rows.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { appendBlocks, ensureConversation, loadViewBlocks, setOverlays } from '../../../store/timeline-store';
import { createViewCache } from '../../../store/view-cache';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_viewcache').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const TS = '2026-11-24T10:00:00.000Z';
let n = 0;
const block = (turn: number, text: string): Block =>
  makeBlock({ type: 'react.note', author: 'assistant', turn_id: `turn_${turn}`, ts: TS, key: `k${++n}`, text });
const summary = (turn: number, keptFrom: string | null): Block =>
  makeBlock({
    type: 'conv.range.summary',
    author: 'system',
    turn_id: `turn_${turn}`,
    ts: TS,
    key: `s${++n}`,
    text: `summary ${n}`,
    meta: { kept_from_block_id: keptFrom },
  });

type Op =
  | { kind: 'append'; count: number }
  | { kind: 'overlay'; pick: number; hidden: boolean; replace: boolean }
  | { kind: 'summary'; keepBack: number }
  | { kind: 'load' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('overlay' as const),
      pick: fc.nat(),
      hidden: fc.boolean(),
      replace: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('summary' as const), keepBack: fc.integer({ min: 0, max: 6 }) }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'load' as const }) },
);

test('a cached view equals loadViewBlocks after any appends, overlays and range summaries', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 25 }), async (ops) => {
      const conv = uniqueId('conv');
      await ensureConversation(db.pool, conv);
      const cache = createViewCache();
      const ids: string[] = [];
      let turn = 1;
      for (const op of ops) {
        if (op.kind === 'append') {
          const blocks = Array.from({ length: op.count }, () => block(turn, `text ${n}`));
          await appendBlocks(db.pool, conv, blocks);
          ids.push(...blocks.map((b) => b.id));
          turn++;
        } else if (op.kind === 'overlay' && ids.length > 0) {
          await setOverlays(db.pool, conv, [
            {
              blockId: ids[op.pick % ids.length]!,
              hidden: op.hidden,
              ...(op.replace ? { replacementText: `replaced ${op.pick}` } : {}),
              reason: 'prune',
            },
          ]);
        } else if (op.kind === 'summary') {
          const kept = ids.length > op.keepBack ? ids[ids.length - 1 - op.keepBack]! : null;
          const s = summary(turn, kept);
          await appendBlocks(db.pool, conv, [s]);
          ids.push(s.id);
        }
        assert.deepEqual(await cache.load(db.pool, conv), await loadViewBlocks(db.pool, conv));
      }
    }),
    { numRuns: 20 },
  );
});

test('a warm round reads only new rows; overlays reload alone; a row committed late reloads the view', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const cache = createViewCache();
  const first = [block(1, 'a'), block(1, 'b'), block(1, 'c')];
  await appendBlocks(db.pool, conv, first);
  assert.equal((await cache.load(db.pool, conv)).length, 3);
  assert.deepEqual(cache.stats().misses, 1);

  await appendBlocks(db.pool, conv, [block(2, 'd')]);
  assert.equal((await cache.load(db.pool, conv)).length, 4);
  assert.equal(cache.stats().hits, 1);
  assert.equal(cache.stats().reloads, 0, 'the new row alone was read');

  await setOverlays(db.pool, conv, [{ blockId: first[0]!.id, hidden: true, reason: 'hide' }]);
  const hidden = await cache.load(db.pool, conv);
  assert.equal(hidden[0]!.hidden, true);
  assert.deepEqual([cache.stats().reloads, cache.stats().overlayReloads], [0, 1]);

  // Two writers: the first takes a lower seq but commits after the second (whose row a round saw).
  const late = db.pool.connect();
  const client = await late;
  try {
    await client.query('BEGIN');
    const lateBlock = block(3, 'late');
    await appendBlocks(client, conv, [lateBlock]);
    await appendBlocks(db.pool, conv, [block(3, 'early')]);
    assert.equal((await cache.load(db.pool, conv)).length, 5, 'the late row is not visible yet');
    await client.query('COMMIT');
    const view = await cache.load(db.pool, conv);
    assert.deepEqual(view, await loadViewBlocks(db.pool, conv));
    assert.ok(
      view.some((b) => b.id === lateBlock.id),
      'the late row is in the view',
    );
    assert.equal(cache.stats().reloads, 1, 'the cached range changed under the cache: one full reload');
  } finally {
    client.release();
  }
});
