/**
 * Governance over HTTP (issue 30): approvals through the gateway (list with the read scope, decide
 * with the approve scope: a key without it is a 403, a bad edit a 400 naming the field, then the
 * call runs), and a spend cap set through the admin API reaching the gateway's turn result and
 * usage endpoints — and, set in the store, the `dreact turn` CLI's output (answer and cap event).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { DreactWorker } from '../../workers/role-workers';
import { callTool, complete, uniqueId, waitFor } from '../support/stack';
import { startTemporalServer, type TemporalServer } from '../../apps/stack/temporal-server';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { createWorker } from '../../workers/worker';
import { DreactClient } from '../../client/api';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { createScriptedProvider } from '../../activities/providers/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { deleteBudget, setBudget } from '../../store/budget-store';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let server: TemporalServer;
let db: Db;
let worker: DreactWorker;
let running: Promise<void>;
let gw: RunningGateway;
let client: DreactClient;
let taskQueue: string;
const keys: Record<'approver' | 'writer' | 'admin', string> = { approver: '', writer: '', admin: '' };
const runs: Array<Record<string, unknown>> = [];

const script = ScriptSpecSchema.parse({
  structured: { conversation_title: { title: 'Gateway approval' } },
  rounds: [callTool('test.send', { to: 'a@example.com' }, 'the user asked'), complete('done')],
});

before(async () => {
  server = await startTemporalServer();
  db = openDb({ schema: uniqueId('t_approvalgw').toLowerCase() });
  await migrate(db);
  taskQueue = uniqueId('tq-approvalgw');
  worker = await createWorker({
    connection: server.env.nativeConnection,
    db,
    taskQueue,
    // A priced model name, so a spend cap has something to count.
    provider: () => ({ ...createScriptedProvider(script), model: 'claude-haiku-4-5' }),
    extraTools: [
      {
        declaration: declareTool({
          id: 'test.send',
          description: 'Sends.',
          params: z.object({ to: z.string().email() }),
          strategy: 'exploitation',
          timeoutMs: 10_000,
          retry: { maximumAttempts: 1 },
          summarize: (p) => `tool test.send ${p.to}`,
          needsApproval: true,
        }),
        impl: {
          id: 'test.send',
          async run(params) {
            runs.push(params);
            return { ok: true, text: 'sent' };
          },
        } satisfies ToolImpl,
      },
    ],
  });
  running = worker.run();
  const key = (scopes: Array<'read' | 'write' | 'approve' | 'admin'>) =>
    createApiKey(db.pool, { tenantId: 'acme', projectId: 'web', userId: null, scopes }).then((k) => k.key);
  keys.approver = await key(['read', 'approve']);
  keys.writer = await key(['read', 'write']);
  keys.admin = await key(['admin']);
  client = new DreactClient(server.env.client, { taskQueue });
  gw = await startGateway({ client, pool: db.pool, apiKeys: [], port: 0, host: '127.0.0.1', log: () => undefined });
});
after(async () => {
  await gw?.close();
  worker?.shutdown();
  await running;
  await dropSchema(db);
  await db.close();
  await server.stop();
});

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

test('approvals through the gateway: list (read), 403 without approve, 400 for a bad edit, then approve', async () => {
  const conv = uniqueId('c');
  assert.ok((await call(keys.writer, 'POST', `/v1/conversations/${conv}/turns`, { prompt: 'send it' })).status < 300);
  const listed = await waitFor('a waiting call', async () => {
    const r = await call(keys.writer, 'GET', `/v1/conversations/${conv}/approvals`);
    return r.json.approvals?.length ? r.json.approvals : undefined;
  });
  const item = listed[0];
  assert.equal(item.toolId, 'test.send');
  assert.deepEqual(item.params, { to: 'a@example.com' });
  assert.equal(item.reason, 'the user asked');
  const path = `/v1/conversations/${conv}/approvals/${item.callId}`;
  const denied = await call(keys.writer, 'POST', path, { decision: 'approve' });
  assert.equal(denied.status, 403);
  assert.match(denied.json.error.message, /approve/);
  const bad = await call(keys.approver, 'POST', path, { decision: 'edit', params: { to: 'nope' } });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /edited params for test\.send are invalid: to/);
  const ok = await call(keys.approver, 'POST', path, { decision: 'approve', reason: 'fine' });
  assert.equal(ok.status, 200);
  assert.equal(ok.json.decided.decision, 'approve');
  const again = await call(keys.approver, 'POST', path, { decision: 'deny' });
  assert.equal(again.status, 404, 'a decided call is not waiting any more');
  const result = await client.result(`acme~web~${conv}`, 1);
  assert.equal(result.answer, 'done');
  assert.deepEqual(runs, [{ to: 'a@example.com' }]);
});

test('a spend cap set through the admin API: the turn answers budget_exceeded; usage shows budgets', async () => {
  const set = await call(keys.admin, 'PUT', '/v1/budgets', { scope: 'tenant', period: 'day', capUsd: 0 });
  assert.equal(set.status, 200);
  assert.equal(
    (await call(keys.writer, 'PUT', '/v1/budgets', { scope: 'tenant', period: 'day', capUsd: 1 })).status,
    403,
  );
  const conv = uniqueId('c');
  await call(keys.writer, 'POST', `/v1/conversations/${conv}/turns`, { prompt: 'send it' });
  const result = await client.result(`acme~web~${conv}`, 1);
  assert.equal(result.completionPath, 'budget_exceeded');
  assert.match(result.answer, /spend cap of tenant acme, per day \(0\.00 USD\) would be exceeded/);
  const usage = await call(keys.admin, 'GET', '/v1/usage');
  assert.equal(usage.json.budgets[0].label, 'tenant acme, per day');
  assert.equal(usage.json.reservedUsd, 0);
  const convUsage = await call(keys.writer, 'GET', `/v1/conversations/${conv}/usage`);
  assert.equal(convUsage.json.reservedUsd, 0);
  assert.equal((await call(keys.admin, 'DELETE', '/v1/budgets', { scope: 'tenant', period: 'day' })).status, 200);
});

test('the spend cap message reaches the CLI: `dreact turn` prints the budget_exceeded answer and the cap event', async () => {
  const cap = { tenantId: 'local', scope: 'tenant' as const, scopeId: '', period: 'day' as const };
  await setBudget(db.pool, { ...cap, capUsd: 0 });
  try {
    const {
      code,
      stdout: out,
      stderr: err,
    } = await runDreact(['turn', 'send it'], {
      env: stackCliEnv({ server, db, taskQueue }),
    });
    assert.equal(code, 0, err);
    assert.match(out, /spend cap of tenant local, per day \(0\.00 USD\) would be exceeded/);
    assert.match(out, /spend cap reached/);
  } finally {
    await deleteBudget(db.pool, cap);
  }
});
