/**
 * TurnWorkflow alone, on the local Temporal dev server, with every activity faked in this process
 * (no Postgres, no model) — as Temporal's samples test workflows with a worker registering fakes.
 * Covers the loop's rules end to end: steer → finalize, a followup that continues a finished round
 * and grants a bonus round, the iteration cap, repeated invalid decisions, tool retries under
 * each plan's own policy (runTool and a tool's own activity), a failed turn recording its failure,
 * and the short activities' timeouts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, tsToMs } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { startTemporalServer, type TemporalServer } from '../../apps/stack/temporal-server';
import type { TurnActivities } from '../../activities/turn-activities';
import { ZERO_USAGE } from '../../core/model/provider';
import type { TurnInput, TurnResult } from '../../core/turn/contracts';
import type {
  DecideInput,
  DecideOutcome,
  ToolFailureInput,
  ToolInput,
  ToolOutcome,
} from '../../core/turn/activity-contracts';
import type { ToolCallPlan } from '../../core/tools/call-plan';
import { followupSignal, steerSignal, turnStateQuery } from '../../contract/definitions';
import { TurnWorkflow } from '../../workflows/turn';
import { uniqueId, waitFor } from '../support/stack';
import { cachedWorkflowBundle } from '../../workers/bundle';

interface Scenario {
  decide(input: DecideInput): Promise<DecideOutcome>;
  tool?(input: ToolInput, attempt: number): Promise<ToolOutcome>;
  /** Every fake activity call, in order. */
  log: Array<{ activity: string; input: unknown; attempt: number }>;
}
const scenarios = new Map<string, Scenario>();
const scenario = (conversationId: string) => {
  const s = scenarios.get(conversationId);
  if (!s) throw new Error(`no scenario for ${conversationId}`);
  return s;
};
/** The conversation of an activity input: its TurnRef's (settings-bearing inputs) or its own. */
const convOf = (input: { conversationId: string } | { turn: { conversationId: string } }) =>
  'turn' in input ? input.turn.conversationId : input.conversationId;
const note = (activity: string, input: { conversationId: string } | { turn: { conversationId: string } }) => {
  scenario(convOf(input)).log.push({ activity, input, attempt: Context.current().info.attempt });
};

const usage = { ...ZERO_USAGE, inputTokens: 10, outputTokens: 2 };
const toolOk = (text: string): ToolOutcome => ({ ok: true, preview: text, sizeBytes: text.length });
const runToolFake = (name: string) => async (input: ToolInput) => {
  note(name, input);
  const s = scenario(input.conversationId);
  if (!s.tool) throw new Error('this scenario calls no tools');
  return s.tool(input, Context.current().info.attempt);
};

const fakes: TurnActivities & { fakeOwn: TurnActivities['runTool'] } = {
  async loadContext(input) {
    note('loadContext', input);
    return { blocks: 0, maxRounds: input.turn.overrides?.maxRounds ?? 15, needsTitle: true, toolCount: 13 };
  },
  async gate(input) {
    note('gate', input);
    return { title: 'a title', source: 'heuristic' };
  },
  async selectTools(input) {
    note('selectTools', input);
    return { toolIds: ['react.read'] };
  },
  async decide(input) {
    note('decide', input);
    return scenario(convOf(input)).decide(input);
  },
  async decideNative(input) {
    note('decideNative', input);
    return scenario(convOf(input)).decide(input);
  },
  async synthesizeAnswer(input) {
    note('synthesizeAnswer', input);
    return { answer: input.loopAnswer, synthesized: false, usage: ZERO_USAGE };
  },
  runTool: runToolFake('runTool'),
  fakeOwn: runToolFake('fakeOwn'),
  async recordToolFailure(input) {
    note('recordToolFailure', input);
    return { ok: false, preview: input.error, sizeBytes: input.error.length };
  },
  async recordTurnFailure(input) {
    note('recordTurnFailure', input);
  },
  async appendToolResults(input) {
    note('appendToolResults', input);
    return { appended: input.callIds };
  },
  async finalizeTurn(input) {
    note('finalizeTurn', input);
    return { answer: `fallback after ${input.completionPath}` };
  },
  async persistTurn(input) {
    note('persistTurn', input);
    return { blocks: 0, bytes: 0 };
  },
  async indexTurnMemory(input) {
    note('indexTurnMemory', input);
    return { entries: 0, embedded: false };
  },
  async recordTurnCancellation(input) {
    note('recordTurnCancellation', input);
  },
};

let server: TemporalServer;
let worker: Worker;
let running: Promise<void>;
const taskQueue = uniqueId('tq-stubbed');
before(async () => {
  server = await startTemporalServer();
  worker = await Worker.create({
    connection: server.env.nativeConnection,
    taskQueue,
    workflowBundle: await cachedWorkflowBundle(require.resolve('../../workflows')),
    activities: fakes,
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
  });
  running = worker.run();
});
after(async () => {
  worker.shutdown();
  await running;
  await server.stop();
});

function start(decide: Scenario['decide'], opts: { maxRounds?: number; tool?: Scenario['tool'] } = {}) {
  const conversationId = uniqueId('conv');
  const s: Scenario = { decide, log: [], ...(opts.tool ? { tool: opts.tool } : {}) };
  scenarios.set(conversationId, s);
  const input: TurnInput = {
    conversationId,
    turnIndex: 1,
    turnId: 'turn_1',
    prompt: { text: 'do the thing', messageId: 'm1' },
    options: { model: { provider: 'scripted' }, ...(opts.maxRounds ? { maxRounds: opts.maxRounds } : {}) },
  };
  const handle = server.env.client.workflow.start(TurnWorkflow, {
    taskQueue,
    workflowId: `conv/${conversationId}/turn/1`,
    args: [input],
  });
  return { s, conversationId, handle };
}

const final = (answer: string, action: 'complete' | 'exit' = 'complete'): DecideOutcome => ({
  kind: 'final',
  action,
  answer,
  completionPath: action,
  usage,
});
const tools = (calls: ToolCallPlan[]): DecideOutcome => ({ kind: 'tools', calls, usage });
const plan = (callId: string, extra: Partial<ToolCallPlan> = {}): ToolCallPlan => ({
  callId,
  toolId: 'react.read',
  summary: `tool react.read ${callId}`,
  concurrent: true,
  ...extra,
});
const calls = (s: Scenario, activity: string) => s.log.filter((l) => l.activity === activity);

/** A decide call that waits (heartbeating) until a steer cancels it. */
async function untilCancelled(started: () => void): Promise<never> {
  const ctx = Context.current();
  started();
  for (;;) {
    ctx.heartbeat();
    await ctx.sleep(100);
  }
}

test('steer mid-round: the decide call is cancelled, one finalize round ends the turn with steer_finalize', async () => {
  let started!: () => void;
  const inRound = new Promise<void>((r) => (started = r));
  const { s, handle } = start(async (input) =>
    input.mode === 'finalize' ? final('stopped as asked') : untilCancelled(started),
  );
  const h = await handle;
  await inRound;
  await h.signal(steerSignal, { kind: 'steer', messageId: 'steer1', text: 'stop now' });
  const result: TurnResult = await h.result();
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'stopped as asked');
  const decides = calls(s, 'decide').map((c) => c.input as DecideInput);
  assert.deepEqual(
    decides.map((d) => [d.mode, d.round]),
    [
      ['normal', 1],
      ['finalize', 2],
    ],
  );
  assert.deepEqual(
    decides[1]!.events.map((e) => e.messageId),
    ['steer1'],
    'the steer reaches the finalize round',
  );
  assert.equal(calls(s, 'finalizeTurn').length, 0, 'the model closed the turn itself');
  assert.equal(calls(s, 'persistTurn').length, 1);
});

test('a followup during a round that answered: the answer is a draft, the turn goes on with a bonus round', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const inRound = new Promise<void>((r) => (started = r));
  const { s, handle } = start(
    async (input) => {
      if (input.round === 1) {
        started();
        await gate;
        return final('draft');
      }
      return final(`final with ${input.events.map((e) => e.text).join(',')}`);
    },
    { maxRounds: 1 },
  );
  const h = await handle;
  await inRound;
  await h.signal(followupSignal, { kind: 'followup', messageId: 'f1', text: 'also this' });
  await waitFor('the followup to be queued', async () => (await h.query(turnStateQuery)).pendingEvents === 1);
  release();
  const result: TurnResult = await h.result();
  assert.equal(result.completionPath, 'complete');
  assert.equal(result.answer, 'final with also this');
  assert.equal(result.rounds, 2, 'a budget of 1 plus the followup’s bonus round');
  const second = calls(s, 'decide')[1]!.input as DecideInput;
  assert.deepEqual(second.iteration, { index: 2, max: 2, base: 1, bonus: 1 });
});

test('iteration cap: a model that only calls tools stops at the budget and the turn gets a fallback answer', async () => {
  const { s, handle } = start(async (input) => tools([plan(`tc_r${input.round}`)]), {
    maxRounds: 2,
    tool: async () => toolOk('read'),
  });
  const result: TurnResult = await (await handle).result();
  assert.equal(result.completionPath, 'iteration_cap');
  assert.equal(result.rounds, 2);
  assert.equal(result.answer, 'fallback after iteration_cap');
  assert.equal(calls(s, 'decide').length, 2);
  assert.equal(calls(s, 'runTool').length, 2);
});

test('repeated invalid decisions end the turn with decision_failure after MAX_DECISION_RETRIES retries', async () => {
  const { s, handle } = start(async () => ({ kind: 'invalid', code: 'bad_json', message: 'not JSON', usage }), {
    maxRounds: 10,
  });
  const result: TurnResult = await (await handle).result();
  assert.equal(result.completionPath, 'decision_failure');
  assert.equal(calls(s, 'decide').length, 3);
  assert.equal((calls(s, 'finalizeTurn')[0]!.input as { completionPath: string }).completionPath, 'decision_failure');
  assert.deepEqual(result.usage.inputTokens, 30, 'usage of every round is summed');
});

test('tool retries follow each plan: retried to success, exhausted into a failed observation, non-retryable at once, on runTool and on a tool’s own activity', async () => {
  const fast = { initialInterval: 10, backoffCoefficient: 1 };
  const { s, handle } = start(
    async (input) =>
      input.round === 1
        ? tools([
            plan('tc_flaky', { startToCloseTimeout: 5_000, retry: { ...fast, maximumAttempts: 3 } }),
            plan('tc_own', {
              activity: 'fakeOwn',
              heartbeatTimeout: 3_000,
              startToCloseTimeout: 5_000,
              retry: { ...fast, maximumAttempts: 2 },
            }),
            plan('tc_bad', {
              startToCloseTimeout: 5_000,
              retry: { ...fast, maximumAttempts: 5, nonRetryableErrorTypes: ['BadInput'] },
            }),
          ])
        : final('went on'),
    {
      tool: async (input, attempt) => {
        if (input.callId === 'tc_flaky' && attempt < 3) throw new Error(`flaky ${attempt}`);
        if (input.callId === 'tc_own') throw new Error(`own ${attempt}`);
        if (input.callId === 'tc_bad') throw ApplicationFailure.create({ message: 'bad params', type: 'BadInput' });
        return toolOk(`ok on ${attempt}`);
      },
    },
  );
  const h = await handle;
  const result: TurnResult = await h.result();
  assert.equal(result.completionPath, 'complete');
  assert.equal(result.answer, 'went on');
  const attemptsOf = (activity: string, callId: string) =>
    s.log.filter((l) => l.activity === activity && (l.input as ToolInput).callId === callId).map((l) => l.attempt);
  assert.deepEqual(attemptsOf('runTool', 'tc_flaky'), [1, 2, 3]);
  assert.deepEqual(attemptsOf('fakeOwn', 'tc_own'), [1, 2]);
  assert.deepEqual(attemptsOf('runTool', 'tc_bad'), [1]);
  // The three calls ran concurrently: failures are recorded in the order they happened.
  const failures = calls(s, 'recordToolFailure')
    .map((c) => c.input as ToolFailureInput)
    .sort((a, b) => a.callId.localeCompare(b.callId));
  assert.deepEqual(
    failures.map((f) => [f.callId, f.retryState, f.heldForBatch]),
    [
      ['tc_bad', 'NON_RETRYABLE_FAILURE', true],
      ['tc_own', 'MAXIMUM_ATTEMPTS_REACHED', true],
    ],
  );
  assert.match(failures[1]!.error, /own 2/);
  assert.match(failures[0]!.error, /bad params/);
  assert.equal(failures[0]!.failureType, 'BadInput');
  assert.deepEqual(
    calls(s, 'appendToolResults').map((c) => (c.input as { callIds: string[] }).callIds),
    [['tc_flaky', 'tc_own', 'tc_bad']],
    'the batch is appended once, in call order',
  );

  // The schedules carry each plan's options; the short steps have timeouts that fit their work.
  const events = (await h.fetchHistory()).events ?? [];
  const sched = (type: string) =>
    events
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter(
        (a): a is temporal.api.history.v1.IActivityTaskScheduledEventAttributes => a?.activityType?.name === type,
      );
  const own = sched('fakeOwn')[0]!;
  assert.equal(tsToMs(own.heartbeatTimeout), 3_000);
  assert.equal(tsToMs(own.startToCloseTimeout), 5_000);
  // loadContext runs as a local activity (its 15 s start-to-close applies in the worker): no schedule.
  assert.equal(sched('loadContext').length, 0);
  for (const [type, max] of [['recordToolFailure', 15_000]] as const) {
    const a = sched(type);
    assert.ok(a.length > 0, `${type} ran`);
    for (const x of a)
      assert.ok(tsToMs(x.startToCloseTimeout) <= max, `${type} start-to-close ${tsToMs(x.startToCloseTimeout)} ms`);
  }
  // The model-calling short steps heartbeat, so a dead worker is noticed within seconds.
  for (const type of ['gate', 'selectTools']) {
    const a = sched(type);
    assert.ok(a.length > 0, `${type} ran`);
    for (const x of a)
      assert.equal(tsToMs(x.heartbeatTimeout), 2_000, `${type} heartbeat timeout ${tsToMs(x.heartbeatTimeout)} ms`);
  }
  // A decision round retries transient failures (kills included) with no attempt cap, within 30 minutes.
  const decides = sched('decide');
  assert.ok(decides.length > 0, 'decide ran');
  for (const x of decides) {
    assert.equal(x.retryPolicy?.maximumAttempts ?? 0, 0, 'no attempt cap');
    assert.equal(tsToMs(x.scheduleToCloseTimeout), 30 * 60_000);
    // A killed worker's round is noticed within 2 s and retried 200 ms later.
    assert.equal(tsToMs(x.heartbeatTimeout), 2_000);
    assert.equal(tsToMs(x.retryPolicy?.initialInterval), 200);
  }
});

test('a failed turn records its failure before failing', async () => {
  const { s, handle } = start(async () => {
    throw ApplicationFailure.nonRetryable('the model is misconfigured', 'Provider.auth');
  });
  const h = await handle;
  await assert.rejects(h.result());
  const [recorded] = calls(s, 'recordTurnFailure');
  assert.ok(recorded, 'recordTurnFailure ran');
  assert.match((recorded.input as { error: string }).error, /the model is misconfigured/);
  assert.equal(calls(s, 'persistTurn').length, 0);
});

test('several calls of one round run concurrently; results are appended in call order; one failure loses nothing', async () => {
  // Round 1: three calls that each wait for the others to have started (only concurrent runs finish).
  const startedCalls = new Set<string>();
  const allStarted = () => startedCalls.size === 3;
  const { s, handle } = start(
    async (input) =>
      input.round === 1 ? tools([plan('tc_a'), plan('tc_b'), plan('tc_c')]) : final(`done after ${input.round - 1}`),
    {
      tool: async (input) => {
        startedCalls.add(input.callId);
        const ctx = Context.current();
        while (!allStarted()) {
          ctx.heartbeat();
          await ctx.sleep(20);
        }
        // Finish in reverse call order.
        await ctx.sleep({ tc_a: 300, tc_b: 150, tc_c: 10 }[input.callId] ?? 0);
        note(`finished ${input.callId}`, input);
        if (input.callId === 'tc_b') throw ApplicationFailure.create({ message: 'b broke', nonRetryable: true });
        return toolOk(input.callId);
      },
    },
  );
  const h = await handle;
  const result: TurnResult = await h.result();
  assert.equal(result.answer, 'done after 1');
  assert.deepEqual(
    s.log.filter((l) => l.activity.startsWith('finished')).map((l) => l.activity),
    ['finished tc_c', 'finished tc_b', 'finished tc_a'],
    'all three ran at once (each waited for the others to start) and finished in reverse order',
  );
  assert.ok(
    calls(s, 'runTool').every((c) => (c.input as ToolInput).heldForBatch === true),
    'each call holds its result for the batch',
  );
  assert.deepEqual(
    calls(s, 'recordToolFailure').map((c) => (c.input as ToolFailureInput).callId),
    ['tc_b'],
    'one failure is recorded; the others are kept',
  );
  assert.deepEqual(
    calls(s, 'appendToolResults').map((c) => (c.input as { callIds: string[] }).callIds),
    [['tc_a', 'tc_b', 'tc_c']],
  );
  const order = s.log.map((l) => l.activity);
  assert.ok(
    order.indexOf('appendToolResults') > order.lastIndexOf('finished tc_a'),
    'the batch is appended after the last call finished',
  );
});

test('a steer during concurrent calls cancels every call; what finished is appended, then the finalize round', async () => {
  let steerNow!: () => void;
  const allRunning = new Promise<void>((r) => (steerNow = r));
  const running = new Set<string>();
  const { s, handle } = start(
    async (input) =>
      input.mode === 'finalize' ? final('stopped') : tools([plan('tc_quick'), plan('tc_slow1'), plan('tc_slow2')]),
    {
      tool: async (input) => {
        if (input.callId === 'tc_quick') return toolOk('quick');
        running.add(input.callId);
        if (running.size === 2) steerNow();
        return untilCancelled(() => undefined);
      },
    },
  );
  const h = await handle;
  await allRunning;
  await h.signal(steerSignal, { kind: 'steer', messageId: 'steer-c', text: 'stop' });
  const result: TurnResult = await h.result();
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'stopped');
  const events = (await h.fetchHistory()).events ?? [];
  const cancelled = events.filter((e) => e.activityTaskCanceledEventAttributes).length;
  assert.equal(cancelled, 2, 'both running calls were cancelled');
  assert.deepEqual(
    calls(s, 'appendToolResults').map((c) => (c.input as { callIds: string[] }).callIds),
    [['tc_quick', 'tc_slow1', 'tc_slow2']],
    'the batch is still closed (the quick call’s result is appended)',
  );
  assert.equal(calls(s, 'recordToolFailure').length, 0, 'a steer is not a tool failure');
});
