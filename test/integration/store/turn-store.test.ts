/**
 * The turns store and the usage ledger on real Postgres: opening a turn is idempotent, a
 * completed turn stays completed when a late failure arrives, a turn that failed before it
 * opened gets its row, and a usage row is recorded once per call key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { ensureConversation } from '../../../store/timeline-store';
import { completeTurn, failTurn, listTurns, openTurn, turnStartedAt } from '../../../store/turn-store';
import { recordUsage } from '../../../store/usage-store';
import { ZERO_USAGE } from '../../../core/model/provider';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_turnstore').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

async function newConversation(): Promise<string> {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  return conv;
}

const usage = { ...ZERO_USAGE, inputTokens: 120, outputTokens: 30 };

test('a turn opens once, completes with its summary, and a late failure does not undo the completion', async () => {
  const conv = await newConversation();
  const t = { conversationId: conv, turnIndex: 1, turnId: 'turn_1', workflowId: `${conv}/turn/1` };
  await openTurn(db.pool, t);
  await openTurn(db.pool, { ...t, workflowId: 'a-retry-never-rewrites' });
  let [row] = await listTurns(db.pool, conv);
  assert.deepEqual([row?.status, row?.workflowId, row?.finishedAt], ['running', t.workflowId, null]);
  const started = await turnStartedAt(db.pool, conv, 'turn_1');
  assert.equal(started?.toISOString(), row?.startedAt);
  await completeTurn(db.pool, { ...t, answer: 'done', completionPath: 'complete', rounds: 2, usage });
  await failTurn(db.pool, { ...t, error: 'late failure' });
  [row] = await listTurns(db.pool, conv);
  assert.deepEqual([row?.status, row?.completionPath, row?.rounds, row?.error], ['completed', 'complete', 2, null]);
  assert.ok(row?.finishedAt);
  assert.equal(await turnStartedAt(db.pool, conv, 'turn_9'), undefined);
});

test('a turn that failed before it opened gets a failed row; turns list oldest first', async () => {
  const conv = await newConversation();
  await failTurn(db.pool, {
    conversationId: conv,
    turnIndex: 2,
    turnId: 'turn_2',
    workflowId: `${conv}/turn/2`,
    error: 'worker gone',
  });
  await openTurn(db.pool, { conversationId: conv, turnIndex: 1, turnId: 'turn_1', workflowId: `${conv}/turn/1` });
  await openTurn(db.pool, { conversationId: conv, turnIndex: 2, turnId: 'turn_2', workflowId: `${conv}/turn/2` });
  const turns = await listTurns(db.pool, conv);
  assert.deepEqual(
    turns.map((r) => [r.turnIndex, r.status, r.error]),
    [
      [1, 'running', null],
      [2, 'failed', 'worker gone'],
    ],
  );
});

test('usage is recorded once per call key (a retried activity does not count twice)', async () => {
  const conv = await newConversation();
  const row = {
    conversationId: conv,
    turnId: 'turn_1',
    round: 1,
    callKey: 'turn_1/r1/a1',
    provider: 'scripted',
    usage,
  };
  await recordUsage(db.pool, row);
  await recordUsage(db.pool, { ...row, usage: { ...usage, inputTokens: 999 } });
  await recordUsage(db.pool, { ...row, callKey: 'turn_1/gate', round: 0, purpose: 'title' });
  const res = await db.pool.query<{ call_key: string; input_tokens: number; purpose: string }>(
    `SELECT call_key, input_tokens, purpose FROM usage_ledger WHERE conversation_id = $1 ORDER BY call_key`,
    [conv],
  );
  assert.deepEqual(
    res.rows.map((r) => [r.call_key, r.input_tokens, r.purpose]),
    [
      ['turn_1/gate', 120, 'title'],
      ['turn_1/r1/a1', 120, 'decision'],
    ],
  );
});
