/**
 * One signing format for outgoing schedule deliveries and incoming hooks (issue 44), end to end on
 * the real stack — the gateway over HTTP, the dev Temporal server, Postgres, a worker with a
 * scripted model: a schedule whose webhook is a dreact hook's URL (`/v1/hooks/:id`, the hook's
 * secret set to the schedule's) delivers its run's answer there; the hook verifies the signature
 * (`X-Dreact-Signature: t=…,v1=…`, core/hooks/signature.ts) and the delivery starts a turn whose
 * prompt is the hook's template over the run's payload. A hook whose secret is not the schedule's
 * answers 401 and starts nothing (the run records `delivered: 401`). The gateway is on loopback:
 * the delivery guard lets it through with DREACT_WEB_ALLOW_PRIVATE=1, as local development does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { gatewayCaller, scriptedAnswer } from '../support/schedule-kit';
import type { RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { listRuns } from '../../store/schedules/run-store';
import { loadBlocks } from '../../store/timeline-store';

let stack: TestStack;
let gw: RunningGateway;
let key: string;

before(async () => {
  process.env.DREACT_MCP_TOKEN_KEY = randomBytes(32).toString('base64');
  process.env.DREACT_WEB_ALLOW_PRIVATE = '1';
  stack = await createTestStack('schedhook');
  await stack.startWorker({
    defaultModel: scriptedAnswer('report ready', 0),
  });
  key = (
    await createApiKey(stack.db.pool, { tenantId: 'acme', projectId: 'p', userId: 'ann', scopes: ['read', 'write'] })
  ).key;
  gw = await stack.startGateway({ allowScripted: true });
});
after(async () => {
  delete process.env.DREACT_WEB_ALLOW_PRIVATE;
  await gw?.close();
  await stack?.teardown();
});

const api = gatewayCaller(
  () => gw.url,
  () => key,
);

async function hookAndSchedule(rotate: boolean) {
  const hook = await api('POST', '/v1/hooks', {
    agent: 'default',
    promptTemplate: 'Schedule {{scheduleId}} ({{$event}}) says: {{answer}}',
  });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const { id: hookId, url } = hook.body as { id: string; url: string };
  const created = await api('POST', '/v1/schedules', {
    agent: 'default',
    cron: '0 0 1 1 *',
    prompt: 'Write the report',
    webhook: { url },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { id, webhookSecret } = created.body as { id: string; webhookSecret: string };
  if (rotate) {
    // The hook verifies with the schedule's secret (a hook takes a secret its sender chose).
    const r = await api('POST', `/v1/hooks/${hookId}/rotate`, { secret: webhookSecret });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  return { hookId, id };
}

const deliveriesOf = async (hookId: string) =>
  (
    await stack.db.pool.query(
      `SELECT delivery_id, conversation_id, turn_index FROM hook_deliveries WHERE hook_id = $1`,
      [hookId],
    )
  ).rows as Array<{ delivery_id: string; conversation_id: string; turn_index: number | null }>;

test("a schedule delivering to a dreact hook: the hook verifies the signature and the run's answer starts a turn", async () => {
  const { hookId, id } = await hookAndSchedule(true);
  try {
    assert.equal((await api('POST', `/v1/schedules/${id}/trigger`)).status, 200);
    const run = await waitFor(
      'the run delivered to the hook',
      async () => (await listRuns(stack.db.pool, id)).find((r) => r.delivery !== null),
      40_000,
      200,
    );
    assert.equal(run.outcome, 'completed');
    assert.equal(run.delivery, 'delivered: 202', 'the hook accepted the signed delivery');
    const [delivery] = await deliveriesOf(hookId);
    assert.equal(delivery?.delivery_id, run.runWorkflowId, "the run's workflow id is the delivery id");
    assert.equal(delivery?.turn_index, 1);
    // The hook's turn ran on the run's answer.
    const hookTurn = await stack.client.result(delivery!.conversation_id, 1);
    assert.equal(hookTurn.answer, 'report ready');
    const prompt = (await loadBlocks(stack.db.pool, delivery!.conversation_id)).find((b) => b.type === 'user.prompt');
    assert.equal(prompt?.text, `Schedule ${id} (schedule.run) says: report ready`);
    assert.notEqual(delivery!.conversation_id, run.conversationId, 'a conversation of its own');
  } finally {
    await api('DELETE', `/v1/schedules/${id}`);
  }
});

test("a hook whose secret is not the schedule's refuses the delivery (401): nothing starts", async () => {
  const { hookId, id } = await hookAndSchedule(false);
  try {
    assert.equal((await api('POST', `/v1/schedules/${id}/trigger`)).status, 200);
    const run = await waitFor(
      'the refused delivery recorded',
      async () => (await listRuns(stack.db.pool, id)).find((r) => r.delivery !== null),
      40_000,
      200,
    );
    assert.equal(run.delivery, 'delivered: 401');
    assert.deepEqual(await deliveriesOf(hookId), [], 'no delivery recorded, no turn');
  } finally {
    await api('DELETE', `/v1/schedules/${id}`);
  }
});
