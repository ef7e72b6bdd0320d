/**
 * Governance over HTTP (issue 30): approvals through the gateway (list with the read scope, decide
 * with the approve scope: a key without it is a 403, a bad edit a 400 naming the field, then the
 * call runs), and a spend cap set through the admin API reaching the gateway's turn result and
 * usage endpoints — and, set in the store, the `dreact turn` CLI's output (answer and cap event).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { sendTool } from '../support/approval-tool';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { deleteBudget, setBudget } from '../../store/budget-store';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let stack: TestStack;
let gw: RunningGateway;
const keys: Record<'approver' | 'writer' | 'admin', string> = { approver: '', writer: '', admin: '' };
const runs: Array<Record<string, unknown>> = [];

const script = ScriptSpecSchema.parse({
  structured: { conversation_title: { title: 'Gateway approval' } },
  rounds: [callTool('test.send', { to: 'a@example.com' }, 'the user asked'), complete('done')],
});

before(async () => {
  stack = await createTestStack('approvalgw');
  await stack.startWorker({
    // A priced model name, so a spend cap has something to count.
    provider: () => ({ ...createScriptedProvider(script), model: 'claude-haiku-4-5' }),
    extraTools: [sendTool(runs)],
  });
  keys.approver = await stack.apiKey(['read', 'approve']);
  keys.writer = await stack.apiKey(['read', 'write']);
  keys.admin = await stack.apiKey(['admin']);
  gw = await stack.startGateway();
});
after(async () => {
  await stack?.teardown();
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
  const nul = await call(keys.approver, 'POST', path, { decision: 'deny', reason: 'no\u0000pe' });
  assert.equal(nul.status, 400, 'a reason Postgres cannot store is refused by name, nothing decided');
  assert.match(nul.json.error.message, /reason.*NUL/);
  const ok = await call(keys.approver, 'POST', path, { decision: 'approve', reason: 'fine' });
  assert.equal(ok.status, 200);
  assert.equal(ok.json.decided.decision, 'approve');
  const again = await call(keys.approver, 'POST', path, { decision: 'deny' });
  assert.equal(again.status, 404, 'a decided call is not waiting any more');
  const result = await stack.client.result(`acme~web~${conv}`, 1);
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
  const result = await stack.client.result(`acme~web~${conv}`, 1);
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
  await setBudget(stack.db.pool, { ...cap, capUsd: 0 });
  try {
    const {
      code,
      stdout: out,
      stderr: err,
    } = await runDreact(['turn', 'send it'], {
      env: stackCliEnv(stack),
    });
    assert.equal(code, 0, err);
    assert.match(out, /spend cap of tenant local, per day \(0\.00 USD\) would be exceeded/);
    assert.match(out, /spend cap reached/);
  } finally {
    await deleteBudget(stack.db.pool, cap);
  }
});
