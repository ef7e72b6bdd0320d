import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { callStages, invalidCallOptions, scheduleToolCall, toolCallPlan } from '../../../core/tools/call-plan';
import { createToolRegistry, declareTool, ToolRegistry } from '../../../core/tools';
import { agentDelegate } from '../../../core/tools/agent-tools';

const own = declareTool({
  id: 'test.own',
  description: 'A tool with its own activity.',
  params: z.object({}),
  strategy: 'exploitation',
  timeoutMs: 120_000,
  retry: {
    maximumAttempts: 4,
    initialInterval: '2s',
    backoffCoefficient: 3,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
  summarize: () => 'tool test.own',
  activity: { name: 'ownTool', heartbeatTimeoutMs: 10_000, taskQueue: 'sandbox' },
});
const registry = createToolRegistry({ extra: [own] });

test('a plan carries the activity type, timeouts, task queue and the RetryPolicy unchanged', () => {
  const plan = toolCallPlan('tc_0123456789ab', 'test.own', registry.activityOptions('test.own', {}));
  assert.deepEqual(plan, {
    callId: 'tc_0123456789ab',
    toolId: 'test.own',
    summary: 'tool test.own',
    activity: 'ownTool',
    startToCloseTimeout: 120_000,
    heartbeatTimeout: 10_000,
    taskQueue: 'sandbox',
    retry: {
      maximumAttempts: 4,
      initialInterval: '2s',
      backoffCoefficient: 3,
      maximumInterval: '1m',
      nonRetryableErrorTypes: ['BadInput'],
    },
  });
  assert.deepEqual(scheduleToolCall(plan), {
    kind: 'activity',
    activity: 'ownTool',
    options: {
      summary: 'tool test.own',
      startToCloseTimeout: 120_000,
      heartbeatTimeout: 10_000,
      taskQueue: 'sandbox',
      retry: plan.retry,
    },
  });
});

test('plans recorded by older builds schedule runTool exactly as those builds did', () => {
  assert.deepEqual(
    scheduleToolCall({
      callId: 'tc_0123456789ab',
      toolId: 'react.read',
      summary: 's',
      startToCloseMs: 30_000,
      maximumAttempts: 3,
      initialIntervalMs: 500,
    }),
    {
      kind: 'activity',
      activity: 'runTool',
      options: { summary: 's', startToCloseTimeout: 30_000, retry: { initialInterval: 500, maximumAttempts: 3 } },
    },
  );
  assert.deepEqual(scheduleToolCall({ callId: 'tc_0123456789ab', toolId: 'react.read', summary: 's' }), {
    kind: 'activity',
    activity: 'runTool',
    options: { summary: 's', startToCloseTimeout: 300_000 },
  });
});

test('an invalid call runs once in runTool (the error observation keeps the tool_use paired)', () => {
  assert.deepEqual(invalidCallOptions(registry, 'made_up'), {
    activity: 'runTool',
    startToCloseTimeout: 60_000,
    retry: { maximumAttempts: 1 },
    summary: 'tool made_up (invalid call)',
  });
  assert.equal(invalidCallOptions(registry, 'test.own').startToCloseTimeout, 120_000);
});

test('the registry lists tools with their own activity and refuses a bad activity name', () => {
  assert.deepEqual(registry.ownActivities(), [
    { toolId: 'test.own', activity: { name: 'ownTool', heartbeatTimeoutMs: 10_000, taskQueue: 'sandbox' } },
  ]);
  assert.throws(
    () => createToolRegistry({ extra: [{ ...own, id: 'test.bad', activity: { name: 'no spaces allowed' } }] }),
    /invalid activity name/,
  );
});

test('callStages: consecutive read-only calls share a stage; every other call runs alone, in call order', () => {
  const c = (id: string, concurrent = false) => ({
    callId: id,
    toolId: 't',
    summary: id,
    ...(concurrent ? { concurrent: true } : {}),
  });
  const ids = (stages: ReturnType<typeof callStages>) => stages.map((s) => s.map((x) => x.callId));
  assert.deepEqual(ids(callStages([])), []);
  assert.deepEqual(ids(callStages([c('w')])), [['w']]);
  assert.deepEqual(ids(callStages([c('r1', true), c('r2', true), c('r3', true)])), [['r1', 'r2', 'r3']]);
  assert.deepEqual(ids(callStages([c('w'), c('r1', true), c('r2', true)])), [['w'], ['r1', 'r2']]);
  assert.deepEqual(ids(callStages([c('r1', true), c('w'), c('r2', true)])), [['r1'], ['w'], ['r2']]);
  assert.deepEqual(ids(callStages([c('w1'), c('w2')])), [['w1'], ['w2']]);
});

test('a delegate call plans a child: prepare, the child workflow, then the tool activity records its answer', () => {
  const reg = new ToolRegistry([agentDelegate]);
  const params = { agent: 'researcher', task: 'find the answer' };
  const plan = toolCallPlan('tc_0123456789ab', 'agent.delegate', reg.activityOptions('agent.delegate', params));
  assert.equal(plan.child, true);
  const s = scheduleToolCall(plan);
  assert.equal(s.kind, 'child');
  if (s.kind !== 'child') return;
  assert.equal(s.activity, 'runTool');
  assert.equal(s.prepare.activity, 'prepareDelegation');
  assert.equal(s.options.summary, 'subagent researcher: find the answer');
  assert.equal(s.prepare.options.summary, 'prepare subagent researcher: find the answer');
  assert.equal(callStages([plan, plan]).length, 2, 'a delegate call runs alone');
});
