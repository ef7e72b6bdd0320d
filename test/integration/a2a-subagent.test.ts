/**
 * A remote A2A agent as a subagent (core/agents/remote-subagents.ts, activities/agents/a2a-delegate.ts)
 * on the real stack: the gateway serves `remote-helper` over A2A; `lead` names it by card URL in its
 * agent file (the gateway key from a secret, sent as x-api-key). A real turn of the lead delegates to
 * it: the call runs as the `delegateA2A` activity with `@a2a-js/sdk`'s client, the remote task's
 * events land in the lead's timeline under deterministic ids, its answer is the call's result, and
 * one remote task exists for the call. A card that answers 404 is a non-retryable observation naming
 * the agent file's field; a card URL outside the fetch allow-list is refused like web_fetch refuses it;
 * a remote task that stops `input-required` is an observation saying so; a cancel of the lead's turn
 * cancels the remote task.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, type Script } from '../support/agent-scripts';
import { a2aClient, agentCardUrl, remoteSubagentYaml, startRemoteSubagentStack } from '../support/a2a';
import { loadBlocks } from '../../store/timeline-store';
import { a2aDelegationIds, A2A_EVENT_BLOCK } from '../../activities/agents/a2a-delegate';
import { a2aTaskId } from '../../core/a2a/task';

const KEY = 'a2a-sub-key';
const CANCELED = 5;
const COMPLETED = 3;

const scripts: Record<string, Script> = {
  lead: {
    rounds: [
      callTool('agent.delegate', { agent: 'helper', task: 'Say hello to the lead.' }),
      complete('The helper said hello.'),
    ],
  },
  'remote-helper': {
    rounds: [thinking('greeting') + complete('Hello from the remote helper.')],
  },
  'lead-missing': {
    rounds: [callTool('agent.delegate', { agent: 'ghost', task: 'Anything.' }), complete('no ghost')],
  },
  'lead-refused': {
    rounds: [callTool('agent.delegate', { agent: 'outside', task: 'Anything.' }), complete('refused')],
  },
  'lead-gated': {
    rounds: [callTool('agent.delegate', { agent: 'gated', task: 'Write a note.' }), complete('the remote waits')],
  },
  'remote-gated': {
    rounds: [
      callTool('react.write', { path: 'files/n.md', channel: 'internal', content: '# n\n', kind: 'file' }),
      complete('unreached'),
    ],
  },
  'lead-cancel': {
    rounds: [callTool('agent.delegate', { agent: 'slow', task: 'Think slowly.' }), complete('unreached')],
  },
  'remote-slow': {
    rounds: [thinking('slowly '.repeat(600)) + complete('slow answer')],
    chunkSize: 4,
    latencyMs: 40,
  },
};

let stack: TestStack;
let env: Awaited<ReturnType<typeof startRemoteSubagentStack>>;

before(async () => {
  env = await startRemoteSubagentStack(
    'a2a_subagent',
    KEY,
    (card) => ({
      'remote-helper': agentFile('remote-helper'),
      'remote-slow': agentFile('remote-slow'),
      lead: agentFile('lead', remoteSubagentYaml('helper', card('remote-helper'))),
      'lead-missing': agentFile('lead-missing', remoteSubagentYaml('ghost', card('nobody'))),
      'lead-refused': agentFile(
        'lead-refused',
        remoteSubagentYaml('outside', 'http://127.0.0.1:1/.well-known/agent-card.json'),
      ),
      'remote-gated': agentFile('remote-gated', 'approval: { tools: [react.write] }\n'),
      'lead-gated': agentFile('lead-gated', remoteSubagentYaml('gated', card('remote-gated'))),
      'lead-cancel': agentFile('lead-cancel', remoteSubagentYaml('slow', card('remote-slow'))),
    }),
    scripts,
  );
  stack = env.stack;
});

after(() => env?.close());

const card = (agent: string) => agentCardUrl(env.gw.url, agent);

const delegateCall = async (conv: string) => {
  const blocks = await loadBlocks(stack.db.pool, conv);
  const call = blocks.find((b) => b.type === 'react.tool.call' && String(b.text).includes('agent.delegate'))!;
  return { blocks, call, result: blocks.find((b) => b.type === 'react.tool.result' && b.call_id === call.call_id) };
};

test('a real turn delegates to a remote A2A agent: its events in the timeline, its answer as the result, one remote task', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask the helper.', {}, undefined, undefined, undefined, 'lead');
  const answer = await stack.client.result(conv, 1);
  assert.equal(answer.answer, 'The helper said hello.');

  const { blocks, call, result } = await delegateCall(conv);
  assert.equal(result?.meta.ok, true, result?.text);
  assert.equal(result?.text, 'Hello from the remote helper.');
  const { contextId } = a2aDelegationIds(conv, call.call_id!);
  const taskId = a2aTaskId(contextId, 1);
  const { usage, ...subagent } = result?.meta.subagent as { usage?: { outputTokens: number } };
  assert.deepEqual(subagent, { agent: 'helper', a2a: card('remote-helper'), task_id: taskId, state: 'completed' });
  // The remote's usage (its final status message's `dreact/usage`) is the call's.
  assert.ok((usage?.outputTokens ?? 0) > 0, JSON.stringify(usage));

  // The remote's events, in order, ids from the turn, the call and the event's index.
  const events = blocks.filter((b) => b.type === A2A_EVENT_BLOCK && b.call_id === call.call_id);
  assert.ok(events.length >= 3, JSON.stringify(events.map((e) => e.text)));
  events.forEach((e, i) => assert.equal(e.id, `${call.turn_id}/${A2A_EVENT_BLOCK}/${call.call_id}.${i}`));
  const kinds = events.map((e) => (e.meta.a2a as { kind: string }).kind);
  assert.equal(kinds[0], 'task');
  assert.ok(kinds.includes('artifact'), kinds.join());
  assert.ok(events.some((e) => e.text === 'Hello from the remote helper.'));
  assert.match(events.at(-1)!.text ?? '', /^completed/);
  // The secret is nowhere in the timeline.
  assert.doesNotMatch(JSON.stringify(blocks), new RegExp(KEY));

  // One remote task for the call: turn 1 of the call's context, no turn 2.
  const client = await a2aClient(env.gw.url, 'remote-helper', KEY);
  const task = await client.getTask({ tenant: '', id: taskId, historyLength: 0 });
  assert.equal(task.status?.state, COMPLETED);
  await assert.rejects(client.getTask({ tenant: '', id: a2aTaskId(contextId, 2), historyLength: 0 }));

  // In history: the call ran as the delegateA2A activity, no child workflow.
  const history = await stack.server.env.client.workflow.getHandle(`conv/${conv}/turn/1`).fetchHistory();
  const types = (history.events ?? []).flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
  );
  assert.ok(types.includes('delegateA2A'), types.join());
  assert.ok(!types.includes('prepareDelegation'));
  const children = (history.events ?? []).flatMap((e) =>
    e.startChildWorkflowExecutionInitiatedEventAttributes
      ? [e.startChildWorkflowExecutionInitiatedEventAttributes.workflowType?.name]
      : [],
  );
  assert.ok(!children.includes('TurnWorkflow'), `no subagent turn: ${children.join()}`);
});

test("a card that answers 404 is a non-retryable observation naming the agent file's field", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask the ghost.', {}, undefined, undefined, undefined, 'lead-missing');
  assert.equal((await stack.client.result(conv, 1)).answer, 'no ghost');
  const { result } = await delegateCall(conv);
  assert.equal(result?.meta.ok, false);
  assert.match(
    result!.text ?? '',
    /agent lead-missing: subagents\[0\] \(ghost\)\.a2a: the agent card at .* answered HTTP 404/,
  );
  assert.equal(result?.meta.failure_type, 'A2ADelegateConfigError');
});

test('a card URL outside the fetch allow-list is refused (the address guard of web_fetch)', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask outside.', {}, undefined, undefined, undefined, 'lead-refused');
  assert.equal((await stack.client.result(conv, 1)).answer, 'refused');
  const { result } = await delegateCall(conv);
  assert.equal(result?.meta.ok, false);
  assert.match(
    result!.text ?? '',
    /subagents\[0\] \(outside\)\.a2a: http:\/\/127\.0\.0\.1:1\/.* refused: port 1 is not open for 127\.0\.0\.1/,
  );
});

test('a remote task that stops input-required (an approval there) is the observation, with what it asks', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask the gated one.', {}, undefined, undefined, undefined, 'lead-gated');
  const turn = await stack.client.result(conv, 1);
  assert.equal(turn.answer, 'the remote waits');
  // A remote task that reports no usage (it stopped before its turn's end) counts zero.
  assert.equal(turn.subagents, 1);
  assert.deepEqual(turn.subagentUsage, { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  const { result } = await delegateCall(conv);
  assert.equal(result?.meta.ok, false);
  assert.match(
    result!.text ?? '',
    /^remote subagent gated needs input \(task dreact-\w+\/1 is input-required\): approval required for react\.write/,
  );
  assert.equal((result?.meta.subagent as { state: string }).state, 'input-required');
});

test("a cancel of the lead's turn cancels the remote task", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask slowly.', {}, undefined, undefined, undefined, 'lead-cancel');
  const events = async () =>
    (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === A2A_EVENT_BLOCK).map((b) => b.meta.a2a);
  await waitFor('the remote task streams', async () => (await events()).length >= 2, 20_000);
  const taskId = ((await events())[0] as { taskId: string }).taskId;
  await stack.client.cancel(conv, { reason: 'enough' });
  await stack.client.result(conv, 1).catch(() => undefined);
  const client = await a2aClient(env.gw.url, 'remote-slow', KEY);
  await waitFor(
    'the remote task is canceled',
    async () => (await client.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state === CANCELED,
    20_000,
  );
});
