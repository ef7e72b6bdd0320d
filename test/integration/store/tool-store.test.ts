/**
 * The tool store on real Postgres: what a tool may read and write, bound to one conversation.
 * Overlays are set all or none (a failing row leaves none of the batch behind).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { appendBlocks, ensureConversation, getArtifact, loadBlocks } from '../../../store/timeline-store';
import { mergeSourcesIntoPool } from '../../../store/sources-store';
import { pgToolStore } from '../../../store/tool-store';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_toolstore').toLowerCase() });
  await migrate(db);
  // A real database failure aimed at one row: an overlay whose reason is `explode` raises.
  await db.pool.query(`
    CREATE FUNCTION fail_on_explode() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.reason = 'explode' THEN RAISE EXCEPTION 'injected failure for %', NEW.block_id; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER fail_on_explode BEFORE INSERT OR UPDATE ON block_overlays FOR EACH ROW EXECUTE FUNCTION fail_on_explode();
  `);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const TS = '2026-03-01T10:00:00.000Z';
const result = (key: string): Block =>
  makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 'turn_1',
    ts: TS,
    key,
    call_id: key,
    path: `tc:turn_1.${key}.result`,
    text: `result ${key}`,
  });

async function conversationWith(blocks: Block[]): Promise<string> {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  await appendBlocks(db.pool, conv, blocks);
  return conv;
}

test("blocks: the conversation's own, in order, with overlays applied; another conversation sees none of them", async () => {
  const [a, b] = [result('tc_000000000001'), result('tc_000000000002')];
  const conv = await conversationWith([a, b]);
  const other = await conversationWith([]);
  const store = pgToolStore(db.pool, conv);
  await store.setOverlays([{ blockId: b.id, hidden: true, replacementText: '[HIDDEN]', reason: 'react.hide tc_1' }]);
  const blocks = await store.blocks();
  assert.deepEqual(
    blocks.map((x) => [x.id, x.hidden ?? false, x.replacement_text]),
    [
      [a.id, false, undefined],
      [b.id, true, '[HIDDEN]'],
    ],
  );
  assert.deepEqual(await store.overlaidBlockIds('react.hide tc_1'), [b.id]);
  assert.deepEqual(await store.overlaidBlockIds('react.hide tc_2'), []);
  assert.deepEqual(await pgToolStore(db.pool, other).blocks(), []);
  assert.deepEqual(await pgToolStore(db.pool, other).overlaidBlockIds('react.hide tc_1'), []);
});

test('setOverlays is all or none: the second overlay failing leaves the first unwritten', async () => {
  const [a, b] = [result('tc_000000000003'), result('tc_000000000004')];
  const conv = await conversationWith([a, b]);
  const store = pgToolStore(db.pool, conv);
  await assert.rejects(
    store.setOverlays([
      { blockId: a.id, hidden: true, replacementText: '[HIDDEN]', reason: 'react.hide tc_3' },
      { blockId: b.id, hidden: true, replacementText: '[HIDDEN]', reason: 'explode' },
    ]),
    /injected failure/,
  );
  assert.deepEqual(await store.overlaidBlockIds('react.hide tc_3'), []);
  assert.ok((await loadBlocks(db.pool, conv)).every((x) => x.hidden === undefined));
});

test('setOverlays: a later overlay of a block replaces it; a block named twice in one batch keeps the last', async () => {
  const a = result('tc_000000000005');
  const conv = await conversationWith([a]);
  const store = pgToolStore(db.pool, conv);
  await store.setOverlays([
    { blockId: a.id, hidden: true, replacementText: 'first', reason: 'r1' },
    { blockId: a.id, hidden: true, replacementText: 'second', reason: 'r2' },
  ]);
  assert.equal((await store.blocks())[0]?.replacement_text, 'second');
  await store.setOverlays([{ blockId: a.id, hidden: false, reason: 'r3' }]);
  const [block] = await store.blocks();
  assert.equal(block?.hidden, false);
  assert.equal(block?.replacement_text, undefined);
  assert.deepEqual(await store.overlaidBlockIds('r3'), [a.id]);
  await store.setOverlays([]);
});

test('files: read back what was written; `once` keeps the first write, upsert replaces; stored as kind file', async () => {
  const conv = await conversationWith([]);
  const store = pgToolStore(db.pool, conv);
  assert.equal(await store.readFile('turn_1/files/notes.md'), undefined);
  assert.equal(
    await store.writeFile(
      { key: 'turn_1/files/notes.md', turnId: 'turn_1', mime: 'text/markdown', content: '# one', createdBy: 'tc_1' },
      'once',
    ),
    true,
  );
  assert.equal(
    await store.writeFile(
      { key: 'turn_1/files/notes.md', turnId: 'turn_1', mime: 'text/markdown', content: '# two', createdBy: 'tc_2' },
      'once',
    ),
    false,
  );
  const once = await store.readFile('turn_1/files/notes.md');
  assert.deepEqual(
    [once?.content, once?.createdBy, once?.mime, once?.sizeBytes, once?.turnId],
    ['# one', 'tc_1', 'text/markdown', 5, 'turn_1'],
  );
  await store.writeFile({
    key: 'turn_1/files/notes.md',
    turnId: 'turn_1',
    mime: 'text/markdown',
    content: '# three!',
    payload: { channel: 'internal' },
    createdBy: 'tc_3',
  });
  const replaced = await store.readFile('turn_1/files/notes.md');
  assert.deepEqual(
    [replaced?.content, replaced?.createdBy, replaced?.payload],
    ['# three!', 'tc_3', { channel: 'internal' }],
  );
  assert.equal((await getArtifact(db.pool, conv, 'file', 'turn_1/files/notes.md'))?.content, '# three!');
  assert.equal(
    await pgToolStore(db.pool, await conversationWith([])).readFile('turn_1/files/notes.md'),
    undefined,
    'files belong to one conversation',
  );
});

test("sourcesPool: the conversation's rows in SID order (empty before any merge)", async () => {
  const conv = await conversationWith([]);
  const store = pgToolStore(db.pool, conv);
  assert.deepEqual(await store.sourcesPool(), []);
  await mergeSourcesIntoPool(db.pool, conv, [
    { sid: 1, url: 'https://example.com/a', title: 'A' },
    { sid: 2, url: 'https://example.com/b', title: 'B' },
  ]);
  assert.deepEqual(
    (await store.sourcesPool()).map((r) => [r.sid, r.url]),
    [
      [1, 'https://example.com/a'],
      [2, 'https://example.com/b'],
    ],
  );
});
