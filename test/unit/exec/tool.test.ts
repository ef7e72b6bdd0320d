import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkCode,
  declareExecPython,
  execIdFor,
  execPython,
  EXEC_MAX_CODE_CHARS,
  EXEC_TOOL_ID,
} from '../../../core/exec/tool';
import { createToolRegistry } from '../../../core/tools';
import { scheduleToolCall, toolCallPlan } from '../../../core/tools/call-plan';

const registry = createToolRegistry({ extra: [execPython] });
const good = { contract: [{ filename: 'out.csv', description: 'numbers', visibility: 'external' }] };

test('exec.python: declaration traits', () => {
  const d = registry.get(EXEC_TOOL_ID);
  assert.equal(d.strategy, 'exploitation');
  assert.equal(d.consumesCode, true);
  assert.equal(d.bundleSafe, false);
  assert.equal(d.activity?.name, 'execLaunch');
  assert.equal(d.activity?.then?.name, 'execAwait');
});

test('exec.python params: contract non-empty, entries complete, names safe and unique, timeout bounded', () => {
  assert.equal(registry.parseParams(EXEC_TOOL_ID, good).ok, true);
  assert.equal(registry.parseParams(EXEC_TOOL_ID, { ...good, timeout_s: 30 }).ok, true);
  const bad: unknown[] = [
    {},
    { contract: [] },
    { contract: [{ filename: 'a.csv', description: 'x' }] },
    { contract: [{ filename: 'a.csv', description: 'x', visibility: 'public' }] },
    { contract: [{ filename: '../a.csv', description: 'x', visibility: 'internal' }] },
    { contract: [{ filename: '/etc/passwd', description: 'x', visibility: 'internal' }] },
    { contract: [{ filename: 'a/../../b', description: 'x', visibility: 'internal' }] },
    { contract: [{ filename: '.hidden', description: 'x', visibility: 'internal' }] },
    { contract: [{ filename: 'a.csv', description: '', visibility: 'internal' }] },
    { contract: [good.contract[0], good.contract[0]] },
    { ...good, timeout_s: 0 },
    { ...good, timeout_s: 100_000 },
    { ...good, extra: 1 },
  ];
  for (const b of bad) assert.equal(registry.parseParams(EXEC_TOOL_ID, b).ok, false, JSON.stringify(b));
});

test('exec.python: the call plan carries the await activity; the workflow schedules it second', () => {
  const plan = toolCallPlan(
    'tc_1',
    EXEC_TOOL_ID,
    registry.activityOptions(
      EXEC_TOOL_ID,
      registry.parseParams(EXEC_TOOL_ID, good).ok ? (good as Record<string, unknown>) : {},
    ),
  );
  assert.equal(plan.activity, 'execLaunch');
  assert.equal(plan.then?.activity, 'execAwait');
  const s = scheduleToolCall(plan);
  assert.equal(s.activity, 'execLaunch');
  assert.equal(s.then?.activity, 'execAwait');
  assert.equal(s.then?.options.heartbeatTimeout, 15_000);
  assert.ok(s.then!.options.startToCloseTimeout > 600_000);
  assert.equal(s.then?.options.summary, 'await exec python · 1 output');
  // A plan without then (every other tool) schedules one activity.
  assert.equal(scheduleToolCall({ ...plan, then: undefined }).then, undefined);
});

test('exec.python summary names the backend for the Temporal UI', () => {
  const reg = createToolRegistry({ extra: [declareExecPython('docker')] });
  const two = { contract: [...good.contract, { filename: 'b.md', description: 'b', visibility: 'internal' }] };
  assert.equal(reg.summary(EXEC_TOOL_ID, two), 'exec python · docker · 2 outputs');
  assert.equal(registry.summary(EXEC_TOOL_ID, good), 'exec python · 1 output');
});

test('exec id: deterministic, distinct per conversation and call', () => {
  assert.equal(execIdFor('c1', 'tc_a'), execIdFor('c1', 'tc_a'));
  assert.notEqual(execIdFor('c1', 'tc_a'), execIdFor('c2', 'tc_a'));
  assert.notEqual(execIdFor('c1', 'tc_a'), execIdFor('c1', 'tc_b'));
  assert.match(execIdFor('c1', 'tc_a'), /^ex-[0-9a-f]{16}$/);
});

test('checkCode: no code, empty code, too long, NUL → refused with a reason', () => {
  assert.equal(checkCode('print(1)').ok, true);
  for (const c of [undefined, '', '   \n', 'x'.repeat(EXEC_MAX_CODE_CHARS + 1), 'a\u0000b']) {
    const r = checkCode(c);
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /Nothing was run/);
  }
});
