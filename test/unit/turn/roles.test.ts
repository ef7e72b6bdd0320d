import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configuredTaskQueues, parseWorkerRoles, queuesFromBase, toolRole } from '../../../core/turn/roles';
import { ToolRegistry } from '../../../core/tools/registry';
import { toolCallPlan } from '../../../core/tools/call-plan';
import { onToolQueue } from '../../../activities/agents/view';
import { BUILTIN_TOOLS } from '../../../core/tools';
import { execPython } from '../../../core/exec/tool';

test('the four queues default to dreact-workflows, dreact-models, dreact-tools, dreact-exec', () => {
  assert.deepEqual(configuredTaskQueues({}), {
    workflows: 'dreact-workflows',
    models: 'dreact-models',
    tools: 'dreact-tools',
    exec: 'dreact-exec',
  });
});

test('DREACT_TASK_QUEUE names the workflows queue and prefixes the others; each role variable wins', () => {
  assert.deepEqual(configuredTaskQueues({ DREACT_TASK_QUEUE: 'acme' }), {
    workflows: 'acme',
    models: 'acme-models',
    tools: 'acme-tools',
    exec: 'acme-exec',
  });
  assert.deepEqual(
    configuredTaskQueues({
      DREACT_TASK_QUEUE: 'acme',
      DREACT_TASK_QUEUE_EXEC: 'sandbox-hosts',
      DREACT_TASK_QUEUE_WORKFLOWS: 'wf',
      DREACT_TASK_QUEUE_MODELS: ' ',
    }),
    { workflows: 'wf', models: 'acme-models', tools: 'acme-tools', exec: 'sandbox-hosts' },
  );
  assert.deepEqual(queuesFromBase('t1'), { workflows: 't1', models: 't1-models', tools: 't1-tools', exec: 't1-exec' });
});

test('a bad queue name stops the start naming the variable', () => {
  assert.throws(
    () => configuredTaskQueues({ DREACT_TASK_QUEUE_TOOLS: 'has space' }),
    /DREACT_TASK_QUEUE_TOOLS: invalid task queue name "has space"/,
  );
  assert.throws(() => configuredTaskQueues({ DREACT_TASK_QUEUE: '-x' }), /DREACT_TASK_QUEUE: invalid/);
});

test('roles: a comma-separated subset in canonical order, all by default, an unknown one named', () => {
  assert.deepEqual(parseWorkerRoles(undefined), ['workflows', 'models', 'tools', 'exec']);
  assert.deepEqual(parseWorkerRoles(''), ['workflows', 'models', 'tools', 'exec']);
  assert.deepEqual(parseWorkerRoles('all'), ['workflows', 'models', 'tools', 'exec']);
  assert.deepEqual(parseWorkerRoles('tools, models'), ['models', 'tools']);
  assert.deepEqual(parseWorkerRoles(['exec']), ['exec']);
  assert.throws(
    () => parseWorkerRoles('models,gpu', '--roles'),
    /--roles: unknown worker role "gpu" \(use any of workflows, models, tools, exec, or all\)/,
  );
});

test('tool plans: exec tools carry the exec role, a declared queue travels, others take the tools role', () => {
  assert.equal(toolRole(execPython), 'exec');
  assert.equal(toolRole({ id: 'exec.shell' }), 'exec');
  assert.equal(toolRole({ id: 'react.read' }), 'tools');
  const queued = { ...BUILTIN_TOOLS.find((d) => d.id === 'react.memsearch')!, queue: 'tenant-gold' };
  const registry = new ToolRegistry([execPython, queued]);
  const exec = toolCallPlan('tc_1', execPython.id, registry.activityOptions(execPython.id, { contract: [] }));
  assert.equal(exec.role, 'exec');
  assert.equal(exec.taskQueue, undefined);
  const mem = toolCallPlan('tc_2', queued.id, registry.activityOptions(queued.id, { query: 'q' }));
  assert.equal(mem.role, undefined);
  assert.equal(mem.taskQueue, 'tenant-gold');
});

test("an agent's tools.queue moves its tool calls, never exec, local or delegate calls", () => {
  const read = BUILTIN_TOOLS.find((d) => d.id === 'react.read')!;
  const search = BUILTIN_TOOLS.find((d) => d.id === 'react.memsearch')!;
  const registry = onToolQueue(new ToolRegistry([read, search, execPython]), 'gold');
  assert.equal(registry.get('react.memsearch').queue, 'gold');
  assert.equal(registry.get('exec.python').queue, undefined);
  assert.equal(registry.get('react.read').queue, read.local ? undefined : 'gold');
  assert.equal(onToolQueue(registry, undefined), registry);
});
