/**
 * The conversation row and the stream window on real Postgres: the title's first write wins, the
 * cache touch round-trips, the stream offset follows publishing, and the retained window shows
 * what pruning removed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { ensureConversation, appendBlocks, countBlocks } from '../../../store/timeline-store';
import {
  loadConversation,
  loadStreamSeq,
  loadTitle,
  saveRoundBookkeeping,
  setTitleIfUnset,
} from '../../../store/conversation-store';
import { loadStreamWindow } from '../../../store/stream-window';
import { publishEvents, pruneEvents } from '../../../store/stream-bus';
import { makeBlock } from '../../../core/timeline/block';
import { uniqueId } from '../../support/stack';
import { loadRoundReads } from '../../../store/round-reads';

/** What a round reads of the conversation row (store/round-reads.ts). */
async function loadRoundState(pool: Db['pool'], conv: string) {
  const { cacheState, charsPerToken } = await loadRoundReads(pool, conv, 'turn_1');
  return { cacheState, charsPerToken };
}

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_convstore').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

test('an unknown conversation has no row, no title, offset 0, no window and an untouched cache', async () => {
  const conv = uniqueId('conv');
  assert.equal(await loadConversation(db.pool, conv), undefined);
  assert.equal(await loadTitle(db.pool, conv), null);
  assert.equal(await loadStreamSeq(db.pool, conv), 0);
  assert.equal(await loadStreamWindow(db.pool, conv), undefined);
  assert.deepEqual(await loadRoundState(db.pool, conv), {
    cacheState: { lastTouchAt: null },
    charsPerToken: undefined,
  });
  assert.equal(await countBlocks(db.pool, conv), 0);
  assert.equal(await setTitleIfUnset(db.pool, conv, 'nobody'), false, 'no row to title');
});

test('a new conversation: untitled, the first title wins, blocks are counted', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const row = await loadConversation(db.pool, conv);
  assert.ok(row);
  assert.equal(row.title, null);
  assert.ok(row.createdAt instanceof Date);
  assert.equal(row.streamSeq, 0);
  assert.equal(await setTitleIfUnset(db.pool, conv, 'Caching in Postgres'), true);
  assert.equal(await setTitleIfUnset(db.pool, conv, 'A later title'), false);
  assert.equal(await loadTitle(db.pool, conv), 'Caching in Postgres');
  const ts = '2026-03-01T10:00:00.000Z';
  await appendBlocks(db.pool, conv, [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: 'turn_1', ts, key: 'header', text: '' }),
    makeBlock({ type: 'user.prompt', author: 'user', turn_id: 'turn_1', ts, key: 'm1', text: 'hello' }),
  ]);
  assert.equal(await countBlocks(db.pool, conv), 2);
});

test("a round's bookkeeping: the cache touch round-trips in epoch ms (bigint) with its TTL, the ratio on its own", async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const touchAt = Date.parse('2026-03-01T10:00:00.123Z');
  await saveRoundBookkeeping(db.pool, conv, { touch: { at: touchAt, ttlSeconds: 300 } });
  assert.deepEqual(await loadRoundState(db.pool, conv), {
    cacheState: { lastTouchAt: touchAt, ttlSeconds: 300 },
    charsPerToken: undefined,
  });
  const row = await loadConversation(db.pool, conv);
  assert.equal(row?.cacheLastTouchAt, touchAt);
  assert.equal(row?.cacheTtlSeconds, 300);
  // A ratio alone leaves the touch as it was; a touch alone leaves the ratio.
  await saveRoundBookkeeping(db.pool, conv, { charsPerToken: 3.25 });
  await saveRoundBookkeeping(db.pool, conv, { touch: { at: touchAt + 1000, ttlSeconds: 3600 } });
  assert.deepEqual(await loadRoundState(db.pool, conv), {
    cacheState: { lastTouchAt: touchAt + 1000, ttlSeconds: 3600 },
    charsPerToken: 3.25,
  });
  await saveRoundBookkeeping(db.pool, conv, {}); // nothing to write: no statement
});

test('the stream offset follows publishing; the window shows the offsets pruning removed', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  assert.deepEqual(await loadStreamWindow(db.pool, conv), { oldestSeq: null, lastSeq: 0 });
  await publishEvents(
    db.pool,
    conv,
    [1, 2, 3, 4].map((i) => ({ kind: 'delta' as const, channel: 'answer' as const, payload: { text: `t${i}` } })),
  );
  assert.equal(await loadStreamSeq(db.pool, conv), 4);
  assert.deepEqual(await loadStreamWindow(db.pool, conv), { oldestSeq: 1, lastSeq: 4 });
  await db.pool.query(
    `UPDATE stream_events SET ts = now() - interval '2 hours' WHERE conversation_id = $1 AND seq <= 2`,
    [conv],
  );
  await pruneEvents(db.pool, 3600);
  assert.deepEqual(await loadStreamWindow(db.pool, conv), { oldestSeq: 3, lastSeq: 4 });
  await db.pool.query(`UPDATE stream_events SET ts = now() - interval '2 hours' WHERE conversation_id = $1`, [conv]);
  await pruneEvents(db.pool, 3600);
  assert.deepEqual(
    await loadStreamWindow(db.pool, conv),
    { oldestSeq: null, lastSeq: 4 },
    'all pruned: the offset survives',
  );
});
