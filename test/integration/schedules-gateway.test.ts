/**
 * `/v1/schedules` on the gateway (issue 44, item 1) against a real dev server, Postgres and worker:
 * create (201 `{ id }`; a bad cron is a 400 naming the field), list, describe, trigger (the run's
 * conversation shown in the caller's id space), pause / unpause, backfill, delete; a key without
 * `write` gets 403 and writes nothing; another tenant and another user of the project (without
 * admin) see no such schedule (404), an admin key of the project does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { scriptedAnswer } from '../support/schedule-kit';
import { createApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let gw: RunningGateway;
const keys = { ann: '', reader: '', bob: '', admin: '', other: '' };

before(async () => {
  stack = await createTestStack('schedgw');
  await stack.startWorker({
    defaultModel: scriptedAnswer('done'),
  });
  const key = (tenantId: string, userId: string | null, scopes: Array<'read' | 'write' | 'admin'>) =>
    createApiKey(stack.db.pool, { tenantId, projectId: 'p', userId, scopes }).then((k) => k.key);
  keys.ann = await key('acme', 'ann', ['read', 'write']);
  keys.reader = await key('acme', 'ann', ['read']);
  keys.bob = await key('acme', 'bob', ['read', 'write']);
  keys.admin = await key('acme', 'carol', ['admin']);
  keys.other = await key('globex', 'ann', ['read', 'write']);
  gw = await stack.startGateway({ allowScripted: true });
});
after(async () => {
  await stack?.teardown();
});

async function call(method: string, path: string, body?: unknown, key = keys.ann) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
  return { status: res.status, text, json: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

test('schedules over HTTP: scopes, tenant isolation, and every operation', async () => {
  const body = { agent: 'default', cron: '0 0 1 1 *', prompt: 'Year in review' };
  const denied = await call('POST', '/v1/schedules', body, keys.reader);
  assert.equal(denied.status, 403, denied.text);
  assert.match(denied.json.error.message, /lacks the "write" scope/);
  assert.equal((await stack.db.pool.query('SELECT 1 FROM schedules')).rowCount, 0, 'nothing written');
  const bad = await call('POST', '/v1/schedules', { ...body, cron: '0 24 * * *' });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /cron: the hour field "24"/);

  const created = await call('POST', '/v1/schedules', body);
  assert.equal(created.status, 201, created.text);
  const id = created.json.id as string;
  assert.match(id, /^sch_/);
  assert.deepEqual(
    (await call('GET', '/v1/schedules')).json.schedules.map((s: { id: string }) => s.id),
    [id],
  );
  const described = await call('GET', `/v1/schedules/${id}`);
  assert.equal(described.status, 200);
  assert.equal(described.json.nextRuns.length > 0, true);

  // Another tenant, and another user of the project without admin: no such schedule.
  for (const key of [keys.other, keys.bob]) {
    assert.equal((await call('GET', `/v1/schedules/${id}`, undefined, key)).status, 404);
    assert.equal((await call('POST', `/v1/schedules/${id}/trigger`, undefined, key)).status, 404);
    assert.equal((await call('DELETE', `/v1/schedules/${id}`, undefined, key)).status, 404);
    assert.deepEqual((await call('GET', '/v1/schedules', undefined, key)).json.schedules, []);
  }
  assert.equal((await call('GET', `/v1/schedules/${id}`, undefined, keys.admin)).status, 200, 'admin reaches it');

  assert.equal((await call('POST', `/v1/schedules/${id}/trigger`)).status, 200);
  const run = await waitFor('the triggered run', async () => {
    const d = await call('GET', `/v1/schedules/${id}`);
    const r = d.json.runs?.[0];
    return r?.outcome === 'completed' ? r : undefined;
  });
  assert.ok(!String(run.conversation).includes('~'), 'the conversation in the caller’s id space');
  const conv = await call('GET', `/v1/conversations/${run.conversation}`);
  assert.equal(conv.status, 200, conv.text);

  assert.equal((await call('POST', `/v1/schedules/${id}/pause`, { note: 'holiday' })).status, 200);
  assert.equal((await call('GET', `/v1/schedules/${id}`)).json.paused, true);
  assert.equal((await call('POST', `/v1/schedules/${id}/unpause`)).status, 200);
  assert.equal((await call('GET', `/v1/schedules/${id}`)).json.paused, false);
  const backfill = await call('POST', `/v1/schedules/${id}/backfill`, {
    from: '2023-06-01T00:00:00Z',
    to: '2024-06-01T00:00:00Z',
  });
  assert.equal(backfill.status, 200, backfill.text);
  await waitFor('the backfilled run', async () => (await call('GET', `/v1/schedules/${id}`)).json.runs.length === 2);
  assert.equal((await call('POST', `/v1/schedules/${id}/backfill`, { from: 'yesterday' })).status, 400);

  assert.equal((await call('DELETE', `/v1/schedules/${id}`)).status, 200);
  assert.equal((await call('GET', `/v1/schedules/${id}`)).status, 404);
});
