/**
 * A worker killed with SIGKILL while a delegate call streams a remote A2A agent's task
 * (activities/agents/a2a-delegate.ts): the retried `delegateA2A` attempt on the next worker process
 * finds the remote task's id in the events it stored, reads the task and follows it instead of
 * sending another — one remote task, no event stored twice, one result for the call.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { scriptedWorkerEnv, startScriptedWorker } from '../support/scripted-worker-process';
import { a2aClient, startA2aGateway } from '../support/a2a';
import { loadBlocks } from '../../store/timeline-store';
import { a2aDelegationIds, A2A_EVENT_BLOCK } from '../../activities/agents/a2a-delegate';
import { a2aTaskId } from '../../core/a2a/task';

const KEY = 'a2a-restart-key';
let stack: TestStack;
let gw: Awaited<ReturnType<typeof startA2aGateway>>;
before(async () => {
  stack = await createTestStack('a2a_subagent_restart');
  gw = await startA2aGateway(stack, KEY);
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const scripts = {
  'kill-lead': {
    rounds: [callTool('agent.delegate', { agent: 'far', task: 'Count slowly.' }), complete('lead done')],
  },
  'kill-remote': {
    rounds: [thinking('counting '.repeat(150)) + complete('remote done')],
    chunkSize: 4,
    latencyMs: 40,
  },
};

test('kill -9 while the remote task streams: the retry follows the same task, nothing duplicated', async () => {
  const cardUrl = `${gw.url}/v1/a2a/kill-remote/.well-known/agent-card.json`;
  const lead =
    `subagents:\n  - { a2a: "${cardUrl}", name: far, auth: { secret: A2A_KEY, header: x-api-key } }\n` +
    'secrets:\n  A2A_KEY: { env: DREACT_TEST_A2A_KEY }\n';
  const env = {
    ...scriptedWorkerEnv(stack, { 'kill-lead': lead, 'kill-remote': '' }, scripts),
    DREACT_TEST_A2A_KEY: KEY,
    DREACT_FETCH_ALLOW_HOSTS: `127.0.0.1:${new URL(gw.url).port}`,
  };
  let worker = startScriptedWorker(env);
  await worker.ready;
  const conv = uniqueId('conv');
  try {
    await stack.client.startTurn(conv, 'Delegate the counting.', {}, undefined, undefined, undefined, 'kill-lead');
    const events = async () => (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === A2A_EVENT_BLOCK);
    await waitFor('the remote task to stream', async () => (await events()).length >= 2);
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = startScriptedWorker(env);
    await worker.ready;

    const result = await stack.client.result(conv, 1);
    assert.equal(result.answer, 'lead done');
    const blocks = await loadBlocks(stack.db.pool, conv);
    const call = blocks.find((b) => b.type === 'react.tool.call')!;
    const results = blocks.filter((b) => b.type === 'react.tool.result' && b.call_id === call.call_id);
    assert.equal(results.length, 1);
    assert.equal(results[0]!.meta.ok, true, results[0]!.text);
    assert.match(results[0]!.text ?? '', /^remote done/);

    // The retry read the stored task id: one remote task, each event once, ids by index.
    const stored = blocks.filter((b) => b.type === A2A_EVENT_BLOCK && b.call_id === call.call_id);
    const keys = stored.map((b) => (b.meta.a2a as { key: string }).key);
    assert.equal(new Set(keys).size, keys.length, keys.join());
    stored.forEach((b, i) => assert.equal(b.id, `${call.turn_id}/${A2A_EVENT_BLOCK}/${call.call_id}.${i}`));
    const { contextId } = a2aDelegationIds(conv, call.call_id!);
    const client = await a2aClient(gw.url, 'kill-remote', KEY);
    await client.getTask({ tenant: '', id: a2aTaskId(contextId, 1), historyLength: 0 });
    await assert.rejects(client.getTask({ tenant: '', id: a2aTaskId(contextId, 2), historyLength: 0 }));
    const history = await stack.server.env.client.workflow.getHandle(`conv/${conv}/turn/1`).fetchHistory();
    const delegateScheduled = new Set(
      (history.events ?? []).flatMap((e) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'delegateA2A' ? [String(e.eventId)] : [],
      ),
    );
    const attempts = (history.events ?? []).flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      return started && delegateScheduled.has(String(started.scheduledEventId)) ? [started.attempt ?? 1] : [];
    });
    assert.ok(
      attempts.some((a) => a > 1),
      `the delegateA2A activity ran again after the kill (attempts ${attempts.join()})`,
    );
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});
