/**
 * The timeline store on real Postgres: a round's append is atomic and idempotent.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { appendBlocks, ensureConversation, loadBlocks, loadViewBlocks } from '../../../store/timeline-store';
import { compactionBatch } from '../../../core/compaction/outputs';
import { visibleItems } from '../../../core/timeline/render';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_tlstore').toLowerCase() });
  await migrate(db);
  // A real database failure aimed at one row: inserting a block whose key is `explode` raises.
  await db.pool.query(`
    CREATE FUNCTION fail_on_explode() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id LIKE '%explode%' THEN RAISE EXCEPTION 'injected failure for %', NEW.id; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER fail_on_explode BEFORE INSERT ON timeline_blocks FOR EACH ROW EXECUTE FUNCTION fail_on_explode();
  `);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const TS = '2026-03-01T10:00:00.000Z';
const call = (key: string): Block =>
  makeBlock({
    type: 'react.tool.call',
    author: 'assistant',
    turn_id: 'turn_1',
    ts: TS,
    key,
    call_id: key.replace(/[^a-z0-9]/g, ''),
    text: '{}',
  });

test('a round append whose second insert fails writes nothing (no half round for a retry to find)', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  await assert.rejects(appendBlocks(db.pool, conv, [call('c1'), call('explode'), call('c3')]), /injected failure/);
  assert.deepEqual(
    (await loadBlocks(db.pool, conv)).map((b) => b.id),
    [],
  );
});

test('append is idempotent, keeps order, skips existing ids and repeated ids within a batch', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const [a, b, c] = [call('a1'), call('b1'), call('c1')];
  assert.deepEqual(await appendBlocks(db.pool, conv, [a, b]), [a.id, b.id]);
  assert.deepEqual(await appendBlocks(db.pool, conv, [a, b]), []);
  assert.deepEqual(await appendBlocks(db.pool, conv, [c, a, c]), [c.id]);
  assert.deepEqual(await appendBlocks(db.pool, conv, []), []);
  assert.deepEqual(
    (await loadBlocks(db.pool, conv)).map((x) => x.id),
    [a.id, b.id, c.id],
  );
});

test('an invalid block is refused before anything is written', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const bad = { ...call('d1'), type: '' } as unknown as Block;
  await assert.rejects(appendBlocks(db.pool, conv, [call('ok1'), bad]));
  assert.deepEqual(await loadBlocks(db.pool, conv), []);
});

test('loadViewBlocks loads from the last summary or the first block it kept, and renders the same view as the full load', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const turn = (t: number): Block[] => [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: `turn_${t}`, ts: TS, key: 'h', text: '' }),
    makeBlock({ type: 'user.prompt', author: 'user', turn_id: `turn_${t}`, ts: TS, key: 'p', text: `question ${t}` }),
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: `turn_${t}`,
      ts: TS,
      key: 'c',
      text: `answer ${t}`,
    }),
  ];
  const history = [1, 2, 3, 4].flatMap(turn);
  await appendBlocks(db.pool, conv, history);
  assert.equal((await loadViewBlocks(db.pool, conv)).length, history.length, 'no summary: everything');
  const batch = compactionBatch({
    compactionId: 'turn_5/compact/1',
    turnId: 'turn_5',
    ts: TS,
    blocks: history,
    coveredIds: history.slice(0, 6).map((b) => b.id),
    coveredTurnIds: ['turn_1', 'turn_2'],
    keptFromId: history[6]!.id,
    summary: 'S',
    tokensBefore: 10,
    tokensAfter: 5,
  });
  await appendBlocks(db.pool, conv, [...batch, ...turn(5)]);
  const view = await loadViewBlocks(db.pool, conv);
  assert.deepEqual(
    view.map((b) => b.id),
    [...history.slice(6), ...batch, ...turn(5)].map((b) => b.id),
  );
  const full = await loadBlocks(db.pool, conv);
  assert.deepEqual(
    visibleItems(view, 'turn_5').map((i) => i.text),
    visibleItems(full, 'turn_5').map((i) => i.text),
  );
});
