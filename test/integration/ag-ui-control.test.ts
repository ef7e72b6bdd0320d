/**
 * AG-UI runs and the turn they tell (issue 43), with `@ag-ui/client`'s HttpAgent against the real
 * gateway, Temporal dev server and Postgres: `abortRun()` detaches (the turn runs on and ends
 * `complete`); the native cancel route ends the turn and the run finishes with AG-UI's `cancelled`
 * outcome; a second run whose user message arrives while the thread's turn runs joins that turn
 * (a followup, or a steer with `forwardedProps.inject: 'steer'`) instead of queueing another.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';

const KEY = 'agui-control-key';
let stack: TestStack;
let gw: RunningGateway;

before(async () => {
  stack = await createTestStack('agui_control');
  await stack.startWorker();
  gw = await stack.startGateway({ apiKeys: [KEY], allowScripted: true, pollMs: 100 });
});
after(async () => {
  await stack?.teardown();
});

/** Round 1 streams slowly (its thinking and decision): a message sent in it reaches the turn mid-round. */
const slow = (answer: string, extra: Record<string, unknown> = {}) => ({
  options: {
    model: {
      provider: 'scripted',
      script: {
        rounds: [callTool('react.plan', { mode: 'new', steps: ['a'] }), complete(answer)],
        chunkSize: 3,
        latencyMs: 25,
        structured: { conversation_title: { title: 'AG-UI' } },
      },
    },
  },
  ...extra,
});

const agentFor = (threadId: string) =>
  new HttpAgent({ url: `${gw.url}/v1/ag-ui`, headers: { 'x-api-key': KEY }, threadId });

/** Runs the agent, collecting its events; `onFirstStep` is called at the first STEP_STARTED. */
function run(agent: HttpAgent, params: Parameters<HttpAgent['runAgent']>[0], onFirstStep?: () => void) {
  const events: BaseEvent[] = [];
  /** How the client's own subscriber read each RUN_FINISHED. */
  const outcomes: string[] = [];
  const done = agent.runAgent(params, {
    onRunFinishedEvent: ({ outcome }) => void outcomes.push(outcome),
    onEvent: ({ event }) => {
      events.push(event);
      if (event.type === EventType.STEP_STARTED && events.filter((e) => e.type === EventType.STEP_STARTED).length === 1)
        onFirstStep?.();
    },
  });
  return { events, outcomes, done };
}

const finishedOf = (events: BaseEvent[]) =>
  events.find((e) => e.type === EventType.RUN_FINISHED) as
    (BaseEvent & { outcome?: { type: string }; result?: { answer: string; completionPath: string } }) | undefined;

async function turns(threadId: string): Promise<Array<{ status: string; completionPath: string | null }>> {
  const res = await fetch(`${gw.url}/v1/conversations/${threadId}/state`, { headers: { 'x-api-key': KEY } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { turns: Array<{ status: string; completionPath: string | null }> }).turns;
}

test('abortRun() detaches: the turn runs on and ends complete', async () => {
  const threadId = uniqueId('thread');
  const agent = agentFor(threadId);
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'go' });
  const r = run(agent, { forwardedProps: slow('all done') }, () => agent.abortRun());
  await r.done.catch(() => undefined);
  assert.equal(finishedOf(r.events), undefined, 'the run was left before it finished');
  assert.equal((await turns(threadId))[0]?.status, 'running', 'the turn still runs');
  const ended = await waitFor('the turn to end', async () => {
    const t = (await turns(threadId))[0];
    return t?.status === 'completed' ? t : undefined;
  });
  assert.equal(ended.completionPath, 'complete');
});

test("the native cancel route ends the turn: the run finishes with AG-UI's cancelled outcome", async () => {
  const threadId = uniqueId('thread');
  const agent = agentFor(threadId);
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'go' });
  const r = run(agent, { forwardedProps: slow('never') }, () => {
    void fetch(`${gw.url}/v1/conversations/${threadId}/turns/1/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'enough' }),
    });
  });
  await r.done;
  assert.equal(finishedOf(r.events)?.outcome?.type, 'cancelled');
  assert.equal(finishedOf(r.events)?.result?.completionPath, 'cancelled');
  assert.deepEqual(r.outcomes, ['cancelled'], "the client's own subscriber reads it as cancelled");
  assert.equal((await turns(threadId))[0]?.completionPath, 'cancelled');
});

test('a second run while the turn runs joins it as a followup: one turn, both runs finish with its answer', async () => {
  const threadId = uniqueId('thread');
  const first = agentFor(threadId);
  first.addMessage({ id: randomUUID(), role: 'user', content: 'go' });
  let second: ReturnType<typeof run> | undefined;
  const secondAgent = agentFor(threadId);
  const followupId = randomUUID();
  const r1 = run(first, { forwardedProps: slow('answered, the followup too') }, () => {
    secondAgent.messages = [...first.messages, { id: followupId, role: 'user', content: 'also this' }];
    second = run(secondAgent, { forwardedProps: slow('unused') });
  });
  await r1.done;
  await waitFor('the second run', async () => second);
  await second!.done;
  assert.equal(finishedOf(r1.events)?.result?.answer, 'answered, the followup too');
  const f2 = finishedOf(second!.events);
  assert.equal(f2?.outcome?.type, 'success');
  assert.equal(f2?.result?.answer, 'answered, the followup too');
  const all = await turns(threadId);
  assert.deepEqual(
    all.map((t) => t.status),
    ['completed'],
    'the followup started no turn of its own',
  );
  const injected = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE kind = 'inject' AND payload->>'messageId' = $1`,
    [followupId],
  );
  assert.equal(injected.rows[0]?.payload.type, 'followup');
  assert.equal(injected.rows[0]?.payload.text, 'also this');
});

test("with forwardedProps.inject: 'steer' the second run steers the turn: it stops and answers with it in mind", async () => {
  const threadId = uniqueId('thread');
  const first = agentFor(threadId);
  first.addMessage({ id: randomUUID(), role: 'user', content: 'go' });
  let second: ReturnType<typeof run> | undefined;
  const secondAgent = agentFor(threadId);
  const r1 = run(first, { forwardedProps: slow('never: the steer ends the turn') }, () => {
    secondAgent.messages = [...first.messages, { id: randomUUID(), role: 'user', content: 'stop and say so' }];
    second = run(secondAgent, { forwardedProps: { inject: 'steer' } });
  });
  await r1.done;
  await waitFor('the second run', async () => second);
  await second!.done;
  const f2 = finishedOf(second!.events);
  assert.equal(f2?.result?.completionPath, 'steer_finalize');
  assert.equal(f2?.result?.answer, 'Stopped as asked: stop and say so');
  assert.equal(finishedOf(r1.events)?.result?.answer, 'Stopped as asked: stop and say so');
  assert.equal((await turns(threadId)).length, 1);
});
