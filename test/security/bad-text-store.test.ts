/**
 * Security suite, the store's last line of defence against text Postgres refuses (issue 26,
 * defect 3). Whatever an earlier layer missed — a tool result, model output, extracted attachment
 * text, an error message — every write path stores a NUL or a lone surrogate as U+FFFD instead of
 * failing (22P05 in `jsonb`, 22021 in `text`) on every retry. And a data exception that still
 * reaches Postgres is classified as non-retryable bad data with our own message.
 *
 * Real Postgres in a schema of its own; no Temporal.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { dropSchema, migrate, openDb, type Db } from '../../store/db';
import { appendBlocks, ensureConversation, loadBlocks } from '../../store/timeline-store';
import { getArtifact, putArtifact } from '../../store/artifact-store';
import { holdToolResult, heldToolResult } from '../../store/tool-results-store';
import { publishEvents, readEvents } from '../../store/stream-bus';
import { completeTurn, failTurn, listTurns, openTurn } from '../../store/turn-store';
import { loadTitle, setTitleIfUnset } from '../../store/conversation-store';
import { makeBlock } from '../../core/timeline/block';
import { badDataFailure } from '../../activities/bad-data';
import { uniqueId } from '../support/stack';

const BAD = 'a\u0000b\ud800c';
const SAFE = 'a\uFFFDb\uFFFDc';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_badstore').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

async function conversation(): Promise<string> {
  const id = uniqueId('conv');
  await ensureConversation(db.pool, id);
  return id;
}

const block = (text: string, key: string) =>
  makeBlock({ type: 'react.tool.result', author: 'tool', turn_id: 'turn_1', ts: '2026-01-01T00:00:00Z', key, text });

test('attack: a timeline block (tool result, model output) with a NUL and a lone surrogate is appended normalised', async () => {
  const conv = await conversation();
  const b = { ...block(BAD, 'k1'), meta: { [`key${'\u0000'}`]: BAD, nested: [BAD] } };
  assert.deepEqual(await appendBlocks(db.pool, conv, [b]), [b.id]);
  const [stored] = await loadBlocks(db.pool, conv);
  assert.equal(stored!.text, SAFE);
  assert.deepEqual(stored!.meta, { 'key\uFFFD': SAFE, nested: [SAFE] });
});

test('attack: a held tool result of a concurrent batch is stored normalised', async () => {
  const conv = await conversation();
  await holdToolResult(db.pool, conv, 'turn_1', 'tc_1', [block(BAD, 'k2')]);
  const held = await heldToolResult(db.pool, conv, 'tc_1');
  assert.equal(held?.[0]?.text, SAFE);
});

test('attack: an artifact payload (extracted attachment text) is stored normalised', async () => {
  const conv = await conversation();
  await putArtifact(db.pool, conv, { kind: 'note', key: 'n1', payload: { text: BAD } });
  const a = await getArtifact(db.pool, conv, 'note', 'n1');
  assert.deepEqual(a?.payload, { text: SAFE });
});

test('attack: streamed model output (a delta event) is published normalised', async () => {
  const conv = await conversation();
  await publishEvents(db.pool, conv, [{ kind: 'delta', channel: 'answer', instance: 0, payload: { text: BAD } }]);
  const [ev] = await readEvents(db.pool, conv, 0);
  assert.deepEqual(ev?.payload, { text: SAFE });
});

test("attack: a turn's answer, its failure message and a model-written title are stored normalised", async () => {
  const conv = await conversation();
  await openTurn(db.pool, { conversationId: conv, turnIndex: 1, turnId: 'turn_1', workflowId: 'w1' });
  await completeTurn(db.pool, {
    conversationId: conv,
    turnId: 'turn_1',
    turnIndex: 1,
    answer: BAD,
    completionPath: 'complete',
    rounds: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  });
  await failTurn(db.pool, { conversationId: conv, turnIndex: 2, turnId: 'turn_2', workflowId: 'w2', error: BAD });
  const turns = await listTurns(db.pool, conv);
  const answer = await db.pool.query(`SELECT answer FROM turns WHERE conversation_id = $1 AND turn_index = 1`, [conv]);
  assert.equal(answer.rows[0].answer, SAFE);
  assert.equal(turns.find((t) => t.turnIndex === 2)?.error, SAFE);
  assert.equal(await setTitleIfUnset(db.pool, conv, `Title ${BAD}`), true);
  assert.equal(await loadTitle(db.pool, conv), `Title ${SAFE}`);
});

test("a data exception Postgres still raises is recognised as bad data (our message, not Postgres's)", async () => {
  for (const [sql, code] of [
    [`SELECT $1::jsonb`, '22P05'],
    [`SELECT $1::text`, '22021'],
  ] as const) {
    const err = await db.pool.query(sql, [code === '22P05' ? '"\\u0000"' : 'a\u0000b']).then(
      () => undefined,
      (e: unknown) => e,
    );
    const failure = badDataFailure(err, 'decide');
    assert.ok(failure, `${code} classified (${String(err)})`);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, new RegExp(`SQLSTATE ${code}`));
  }
});
