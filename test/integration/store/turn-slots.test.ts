/**
 * The per-tenant turn semaphore (store/turn-slots.ts) on real Postgres: 20 concurrent acquires
 * under a limit of 3 grant exactly 3 and queue the rest at distinct positions 1..17; an acquire is
 * idempotent; releases grant in queue order and record a grant as told only once signalled (a
 * failed signal is retried, a turn that is gone has its slot released); a raised limit and a
 * removed one let the queue in; a tenant without a limit records nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import {
  acquireTurnSlot,
  deleteTurnLimit,
  promoteWaiting,
  releaseTurnSlot,
  setTurnLimit,
  signalGrants,
  tenantSlots,
} from '../../../store/turn-slots';
import { uniqueId } from '../../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_turnslots').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const wf = (i: number) => `conv/c${i}/turn/1`;

test('20 concurrent acquires under a limit of 3: 3 granted, 17 queued at distinct positions', async () => {
  const tenantId = uniqueId('acme');
  await setTurnLimit(db.pool, { tenantId, maxTurns: 3 });
  const states = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      acquireTurnSlot(db.pool, { tenantId, conversationId: `c${i}`, workflowId: `${tenantId}/${wf(i)}` }),
    ),
  );
  assert.equal(states.filter((s) => s?.granted).length, 3);
  const positions = states.filter((s) => s && !s.granted).map((s) => s!.position);
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    Array.from({ length: 17 }, (_, i) => i + 1),
  );
  // Idempotent: a retried acquire returns the recorded state.
  const again = await acquireTurnSlot(db.pool, { tenantId, conversationId: 'c0', workflowId: `${tenantId}/${wf(0)}` });
  assert.deepEqual(again, states[0]);
});

test('releases grant in queue order; a grant counts as told only once signalled; gone turns are released', async () => {
  const tenantId = uniqueId('acme');
  await setTurnLimit(db.pool, { tenantId, maxTurns: 1 });
  const ids = [0, 1, 2, 3].map((i) => `${tenantId}/${wf(i)}`);
  for (const [i, id] of ids.entries())
    await acquireTurnSlot(db.pool, { tenantId, conversationId: `c${i}`, workflowId: id });
  assert.equal(await releaseTurnSlot(db.pool, ids[0]!), tenantId);
  assert.equal(await releaseTurnSlot(db.pool, ids[0]!), undefined, 'a second release is a no-op');
  // The signal fails once (a network error): nothing is recorded as told, the next pass tells it.
  await assert.rejects(
    signalGrants(db.pool, tenantId, async () => {
      throw new Error('unavailable');
    }),
  );
  const told: string[] = [];
  // ids[1] is gone (terminated): its slot is released and ids[2] granted and told in its place.
  assert.deepEqual(
    await signalGrants(db.pool, tenantId, async (id) => {
      if (id === ids[1]) return 'gone';
      told.push(id);
      return 'ok';
    }),
    [ids[2]],
  );
  assert.deepEqual(told, [ids[2]]);
  const slots = await tenantSlots(db.pool, tenantId);
  assert.deepEqual(
    slots.map((s) => [s.workflowId, s.granted, s.position]),
    [
      [ids[2], true, 0],
      [ids[3], false, 1],
    ],
  );
});

test('a raised limit and a removed one let the queue in; a tenant without a limit records nothing', async () => {
  const tenantId = uniqueId('acme');
  await setTurnLimit(db.pool, { tenantId, maxTurns: 1 });
  for (const i of [0, 1, 2])
    await acquireTurnSlot(db.pool, { tenantId, conversationId: `c${i}`, workflowId: `${tenantId}/${wf(i)}` });
  await setTurnLimit(db.pool, { tenantId, maxTurns: 2 });
  await promoteWaiting(db.pool, tenantId);
  assert.deepEqual(
    (await tenantSlots(db.pool, tenantId)).map((s) => s.granted),
    [true, true, false],
  );
  await deleteTurnLimit(db.pool, tenantId);
  await promoteWaiting(db.pool, tenantId);
  assert.ok((await tenantSlots(db.pool, tenantId)).every((s) => s.granted));
  const free = uniqueId('free');
  assert.equal(
    await acquireTurnSlot(db.pool, { tenantId: free, conversationId: 'x', workflowId: 'conv/x/turn/1' }),
    undefined,
  );
  assert.deepEqual(await tenantSlots(db.pool, free), []);
});
