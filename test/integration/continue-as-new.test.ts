import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DreactWorker } from '../../workers/role-workers';
import { startTemporalServer, type TemporalServer } from '../../apps/stack/temporal-server';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { createWorker } from '../../workers/worker';
import { DreactClient } from '../../client/api';
import { uniqueId, waitFor } from '../support/stack';

// A server of its own that suggests continue-as-new after a few dozen events.
let server: TemporalServer;
let db: Db;
let worker: DreactWorker;
let running: Promise<void>;
let client: DreactClient;
before(async () => {
  server = await startTemporalServer({
    extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=30'],
  });
  db = openDb({ schema: uniqueId('t_can') });
  await migrate(db);
  const taskQueue = uniqueId('tq-can');
  worker = await createWorker({ connection: server.env.nativeConnection, db, taskQueue });
  running = worker.run();
  client = new DreactClient(server.env.client, { taskQueue });
});
after(async () => {
  worker.shutdown();
  await running;
  await dropSchema(db);
  await db.close();
  await server.stop();
});

test('the conversation workflow continues as new when Temporal suggests it, keeping turn numbering and dedup state', async () => {
  const conv = uniqueId('conv');
  const handle = server.env.client.workflow.getHandle(`conv/${conv}`);
  const firstRun =
    (await client.startTurn(conv, 'turn one', { model: { provider: 'scripted', script: 'echo' } }),
    (await handle.describe()).runId);
  for (let i = 1; i <= 5; i++) {
    if (i > 1) await client.startTurn(conv, `turn ${i}`, { model: { provider: 'scripted', script: 'echo' } });
    const r = await client.result(conv, i);
    assert.equal(r.turnIndex, i);
  }
  await waitFor('a new run', async () => (await handle.describe()).runId !== firstRun, 20_000);
  const view = await client.conversationState(conv);
  assert.equal(view.nextTurnIndex, 6, 'turn numbering carried across runs');
  const r6 = await client.startTurn(conv, 'turn six', { model: { provider: 'scripted', script: 'echo' } });
  assert.equal(r6.turnIndex, 6);
  assert.equal((await client.result(conv, 6)).turnIndex, 6);
});
