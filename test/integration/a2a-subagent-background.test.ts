/**
 * Remote A2A subagents as complete as local ones (activities/agents/a2a-background.ts,
 * workflows/background-task.ts, core/a2a/stream-to-a2a.ts `dreact/usage`), on the real stack with
 * the gateway's own A2A server as the remote, through `@a2a-js/sdk`:
 *
 * - `wait: false` to a remote subagent returns the receipt a local background delegate returns; a
 *   BackgroundTaskWorkflow runs the remote call; `agent.tasks` lists it; the remote's answer arrives
 *   once, as a followup that starts the parent's next turn.
 * - the gateway's task cancel route cancels a running remote task: the remote task ends canceled
 *   there, the task is recorded cancelled and nothing is delivered.
 * - a steer of the parent while a waited remote delegate runs is forwarded to the remote task (a
 *   message in it): the remote's turn finalizes, its answer is the call's result, both complete.
 * - a waited remote delegate's usage (the remote's final status message metadata) is the parent
 *   turn's `subagentUsage`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, type Script } from '../support/agent-scripts';
import { a2aClient, remoteSubagentYaml, startRemoteSubagentStack } from '../support/a2a';
import { loadBlocks } from '../../store/timeline-store';
import { loadBackgroundTask } from '../../store/background-task-store';
import { A2A_EVENT_BLOCK } from '../../activities/agents/a2a-delegate';
import { A2A_USAGE_KEY } from '../../core/a2a/stream-to-a2a';
import { backgroundTaskId, backgroundTaskWorkflowId } from '../../core/agents/background';
import { subagentConversationId } from '../../core/agents/subagents';
import { turnWorkflowId } from '../../core/turn/ids';
import { recordHistory } from '../support/fixtures';

const KEY = 'a2a-bg-key';
const CANCELED = 5;
const COMPLETED = 3;

const scripts: Record<string, Script> = {
  'bg-lead': {
    rounds: [complete('unused')],
    turns: [
      [
        callTool('agent.delegate', { agent: 'helper', task: 'Write the remote report.', wait: false }),
        callTool('agent.tasks', {}),
        complete('lead: the remote report is on its way'),
      ],
      [complete('lead: I read the remote report')],
    ],
  },
  'remote-helper': {
    rounds: [thinking('working '.repeat(60)) + complete('remote report: all green')],
    chunkSize: 4,
    latencyMs: 25,
  },
  'bg-stopper': {
    rounds: [complete('unused')],
    turns: [
      [callTool('agent.delegate', { agent: 'slow', task: 'Think slowly.', wait: false }), complete('stopper: started')],
    ],
  },
  'remote-slow': {
    rounds: [thinking('slowly '.repeat(600)) + complete('slow answer')],
    chunkSize: 4,
    latencyMs: 40,
  },
  'usage-lead': {
    rounds: [callTool('agent.delegate', { agent: 'quick', task: 'Say hello.' }), complete('usage: done')],
  },
  'remote-quick': { rounds: [thinking('greeting') + complete('Hello from the quick remote.')] },
  'steer-lead': {
    rounds: [callTool('agent.delegate', { agent: 'pondering', task: 'Think for a long time.' }), complete('unreached')],
    finalize: complete('lead stopped after the steer'),
  },
  'remote-pondering': {
    rounds: [thinking('slowly '.repeat(600)) + complete('pondering answer')],
    finalize: complete('remote stopped: {{event}}'),
    chunkSize: 4,
    latencyMs: 40,
  },
};

let stack: TestStack;
let env: Awaited<ReturnType<typeof startRemoteSubagentStack>>;

before(async () => {
  env = await startRemoteSubagentStack(
    'a2a_subagent_bg',
    KEY,
    (card) => ({
      'steer-lead': agentFile('steer-lead', remoteSubagentYaml('pondering', card('remote-pondering'))),
      ...Object.fromEntries(
        ['remote-helper', 'remote-slow', 'remote-quick', 'remote-pondering'].map((r) => [r, agentFile(r)]),
      ),
      'bg-lead': agentFile('bg-lead', remoteSubagentYaml('helper', card('remote-helper'))),
      'bg-stopper': agentFile('bg-stopper', remoteSubagentYaml('slow', card('remote-slow'))),
      'usage-lead': agentFile('usage-lead', remoteSubagentYaml('quick', card('remote-quick'))),
    }),
    scripts,
  );
  stack = env.stack;
});

after(() => env?.close());

const temporal = () => stack.server.env.client.workflow;
const calls = async (conv: string) =>
  (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.call');
const resultOf = async (conv: string, callId: string) =>
  (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result' && b.call_id === callId);
const remoteEvents = async (conv: string, callId: string) =>
  (await loadBlocks(stack.db.pool, subagentConversationId(conv, callId)))
    .filter((b) => b.type === A2A_EVENT_BLOCK)
    .map((b) => b.meta.a2a as { kind: string; taskId: string; state?: string });

test('wait: false to a remote subagent: the receipt, agent.tasks lists it, its answer arrives once as a followup', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Get me the remote report.', {}, undefined, undefined, undefined, 'bg-lead');
  const first = await stack.client.result(conv, 1);
  assert.equal(first.answer, 'lead: the remote report is on its way');

  const [delegated, listed] = await calls(conv);
  const callId = delegated!.call_id!;
  const taskId = backgroundTaskId(callId);
  const receipt = await resultOf(conv, callId);
  assert.equal(receipt?.meta.ok, true, receipt?.text ?? '');
  assert.match(receipt!.text ?? '', new RegExp(`^Started background task ${taskId}: subagent helper`));
  assert.deepEqual(receipt!.meta.background_task, {
    task_id: taskId,
    workflow_id: backgroundTaskWorkflowId(conv, callId),
    on_result: 'followup',
  });
  const tasks = await resultOf(conv, listed!.call_id!);
  assert.match(tasks!.text ?? '', new RegExp(`${taskId}: subagent helper, running`));

  // No delegateA2A in the turn: its task's workflow ran the remote call.
  const handle = temporal().getHandle(backgroundTaskWorkflowId(conv, callId));
  const outcome = await handle.result();
  assert.deepEqual({ status: outcome.status, delivered: outcome.delivered }, { status: 'completed', delivered: true });
  assert.ok(outcome.usage.outputTokens > 0, JSON.stringify(outcome.usage));
  const taskTypes = ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
  );
  assert.deepEqual(taskTypes, ['runRemoteTask', 'deliverBackgroundTask']);

  // The remote task's events are in the task's conversation; the remote task completed there.
  const events = await remoteEvents(conv, callId);
  assert.equal(events[0]?.kind, 'task');
  const client = await a2aClient(env.gw.url, 'remote-helper', KEY);
  const remoteTask = await client.getTask({ tenant: '', id: events[0]!.taskId, historyLength: 0 });
  assert.equal(remoteTask.status?.state, COMPLETED);
  assert.deepEqual(outcome.usage, remoteTask.status?.message?.metadata?.[A2A_USAGE_KEY]);

  // Delivered once: one followup prompt with the remote's answer, one new turn.
  await waitFor('the followup turn', async () => (await stack.client.conversationState(conv)).nextTurnIndex > 2);
  assert.equal((await stack.client.result(conv, 2)).answer, 'lead: I read the remote report');
  const prompts = (await loadBlocks(stack.db.pool, conv)).filter(
    (b) => b.type === 'user.prompt' && String(b.text).startsWith('[BACKGROUND TASK]'),
  );
  assert.equal(prompts.length, 1);
  assert.match(prompts[0]!.text ?? '', /remote report: all green/);
  const row = await loadBackgroundTask(stack.db.pool, conv, taskId);
  assert.equal(row?.status, 'completed');
  assert.equal(row?.answer, 'remote report: all green');
  assert.ok(row?.deliveredAt);

  // Replay fixtures of the new shape (DREACT_RECORD_FIXTURES=1): the turn that started it, the task.
  await recordHistory(stack.server.address, turnWorkflowId(conv, 1), 'turn-remote-background-v1');
  await recordHistory(stack.server.address, backgroundTaskWorkflowId(conv, callId), 'background-task-remote-v1');
});

test("the gateway's cancel route cancels a running remote task: canceled there, nothing delivered", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Start a slow remote task.', {}, undefined, undefined, undefined, 'bg-stopper');
  assert.equal((await stack.client.result(conv, 1)).answer, 'stopper: started');
  const callId = (await calls(conv))[0]!.call_id!;
  const taskId = backgroundTaskId(callId);
  await waitFor('the remote task streams', async () => (await remoteEvents(conv, callId)).length >= 2, 20_000);
  const remoteTaskId = (await remoteEvents(conv, callId))[0]!.taskId;

  const res = await fetch(`${env.gw.url}/v1/conversations/${conv}/tasks/${taskId}/cancel`, {
    method: 'POST',
    headers: { 'x-api-key': KEY },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const outcome = await temporal().getHandle(backgroundTaskWorkflowId(conv, callId)).result();
  assert.deepEqual({ status: outcome.status, delivered: outcome.delivered }, { status: 'cancelled', delivered: false });

  const client = await a2aClient(env.gw.url, 'remote-slow', KEY);
  await waitFor(
    'the remote task is canceled',
    async () => (await client.getTask({ tenant: '', id: remoteTaskId, historyLength: 0 })).status?.state === CANCELED,
    20_000,
  );
  assert.equal((await loadBackgroundTask(stack.db.pool, conv, taskId))?.status, 'cancelled');
  assert.equal((await stack.client.conversationState(conv)).nextTurnIndex, 2, 'no followup turn');
});

test("a waited remote delegate's usage is the parent turn's subagentUsage", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Ask the quick one.', {}, undefined, undefined, undefined, 'usage-lead');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'usage: done');
  const call = (await calls(conv))[0]!;
  const observed = await resultOf(conv, call.call_id!);
  assert.equal(observed?.meta.ok, true, observed?.text ?? '');
  const subagent = observed!.meta.subagent as { task_id: string; usage?: Record<string, number> };
  const client = await a2aClient(env.gw.url, 'remote-quick', KEY);
  const remoteTask = await client.getTask({ tenant: '', id: subagent.task_id, historyLength: 0 });
  const reported = remoteTask.status?.message?.metadata?.[A2A_USAGE_KEY] as { outputTokens: number };
  assert.ok(reported.outputTokens > 0, JSON.stringify(reported));
  assert.deepEqual(subagent.usage, reported);
  assert.equal(result.subagents, 1);
  assert.deepEqual(result.subagentUsage, reported);
});

test("a steer of the parent reaches the waited remote task: it finalizes, its answer is the call's result", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Delegate something slow.', {}, undefined, undefined, undefined, 'steer-lead');
  const events = async () =>
    (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === A2A_EVENT_BLOCK).map((b) => b.meta.a2a);
  await waitFor('the remote task streams', async () => (await events()).length >= 2, 20_000);
  const remoteTaskId = ((await events())[0] as { taskId: string }).taskId;
  await stack.client.steer(conv, 'stop now');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'lead stopped after the steer');
  const call = (await calls(conv))[0]!;
  const observed = await resultOf(conv, call.call_id!);
  assert.equal(observed?.meta.ok, true, observed?.text ?? '');
  assert.match(observed!.text ?? '', /^remote stopped: stop now/);
  const client = await a2aClient(env.gw.url, 'remote-pondering', KEY);
  const remoteTask = await client.getTask({ tenant: '', id: remoteTaskId, historyLength: 0 });
  assert.equal(remoteTask.status?.state, COMPLETED);
  assert.equal(result.subagents, 1);
  await recordHistory(stack.server.address, turnWorkflowId(conv, 1), 'turn-remote-steer-forwarded-v1');
});
