/**
 * Background tasks through the gateway and the CLI (apps/gateway/task-routes.ts,
 * apps/cli/tasks-command.ts): a turn started over HTTP delegates with `wait: false`; its task is
 * listed by `GET /v1/conversations/:id/tasks` (read scope) and `dreact tasks <conv> --json`; another
 * tenant sees no conversation (404); a read-only key cannot cancel (403); an unknown task is a 404
 * naming it; `dreact tasks cancel` cancels the running one (its subagent's turn ends cancelled,
 * nothing is delivered) and a second cancel, over HTTP, is a 409.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents } from '../support/agent-scripts';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { subagentWorkflowId } from '../../core/agents/subagents';

let stack: TestStack;
let gw: RunningGateway;
const keys = { reader: '', writer: '', other: '' };

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-tasksgw-'));
  writeFileSync(path.join(dir, 'tk-lead.yaml'), agentFile('tk-lead', 'subagents: [tk-slow]\n'));
  writeFileSync(path.join(dir, 'tk-slow.yaml'), agentFile('tk-slow'));
  stack = await createTestStack('tasks_gw');
  await stack.startWorker({
    agents: { dir },
    provider: scriptedAgents({
      'tk-lead': {
        rounds: [
          callTool('agent.delegate', { agent: 'tk-slow', task: 'Count the stars.', wait: false }),
          complete('lead: counting in the background'),
        ],
      },
      'tk-slow': { rounds: [callTool('test.hold', {}), complete('slow: unreached')] },
    }),
    extraTools: [
      {
        declaration: declareTool({
          id: 'test.hold',
          description: 'Holds until cancelled.',
          params: z.object({}),
          strategy: 'neutral',
          timeoutMs: 120_000,
          retry: { maximumAttempts: 1 },
          summarize: () => 'hold',
        }),
        impl: {
          id: 'test.hold',
          async run(_params, ctx) {
            const beat = setInterval(() => ctx.heartbeat(), 300);
            try {
              await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
              throw new Error('hold cancelled');
            } finally {
              clearInterval(beat);
            }
          },
        } satisfies ToolImpl,
      },
    ],
  });
  const key = (tenantId: string, scopes: Array<'read' | 'write'>) =>
    createApiKey(stack.db.pool, { tenantId, projectId: 'web', userId: null, scopes }).then((k) => k.key);
  keys.reader = await key('acme', ['read']);
  keys.writer = await key('acme', ['read', 'write']);
  keys.other = await key('globex', ['read', 'write']);
  gw = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    port: 0,
    host: '127.0.0.1',
    log: () => undefined,
  });
});
after(async () => {
  await gw?.close();
  await stack.teardown();
});

async function call(key: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${gw.url}${url}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

test('tasks through the gateway and the CLI: list, refusals, cancel, a second cancel is a 409', async () => {
  const conv = uniqueId('c');
  const stored = `acme~web~${conv}`;
  const started = await call(keys.writer, 'POST', `/v1/conversations/${conv}/turns`, {
    prompt: 'count the stars',
    agent: 'tk-lead',
  });
  assert.ok(started.status < 300, JSON.stringify(started.json));
  assert.equal((await stack.client.result(stored, 1)).answer, 'lead: counting in the background');

  const listed = await call(keys.reader, 'GET', `/v1/conversations/${conv}/tasks`);
  assert.equal(listed.status, 200);
  assert.equal(listed.json.conversationId, conv);
  assert.equal(listed.json.tasks.length, 1);
  const task = listed.json.tasks[0];
  assert.match(task.taskId, /^task-tc_/);
  assert.equal(task.agent, 'tk-slow');
  assert.equal(task.status, 'running');
  assert.equal(task.task, 'Count the stars.');
  assert.ok(!String(task.childConversationId).startsWith('acme~'), 'the child id is shown in the caller’s space');
  assert.equal(
    (await call(keys.reader, 'GET', `/v1/conversations/${conv}/tasks?status=completed`)).json.tasks.length,
    0,
  );
  const badStatus = await call(keys.reader, 'GET', `/v1/conversations/${conv}/tasks?status=done`);
  assert.equal(badStatus.status, 400);
  assert.match(badStatus.json.error.message, /status/);

  // Refusals: another tenant sees no conversation; a read-only key cannot cancel; an unknown task is a 404.
  const foreign = await call(keys.other, 'GET', `/v1/conversations/${conv}/tasks`);
  assert.equal(foreign.status, 404);
  assert.equal((await call(keys.other, 'POST', `/v1/conversations/${conv}/tasks/${task.taskId}/cancel`)).status, 404);
  const readOnly = await call(keys.reader, 'POST', `/v1/conversations/${conv}/tasks/${task.taskId}/cancel`);
  assert.equal(readOnly.status, 403);
  assert.match(readOnly.json.error.message, /"write" scope/);
  const unknown = await call(keys.writer, 'POST', `/v1/conversations/${conv}/tasks/task-nope/cancel`);
  assert.equal(unknown.status, 404);
  assert.match(unknown.json.error.message, /no background task "task-nope" in this conversation/);

  // The CLI lists it and cancels it.
  const env = stackCliEnv(stack);
  const cliList = await runDreact(['tasks', stored, '--json'], { env });
  assert.equal(cliList.code, 0, cliList.stderr);
  const cliTasks = JSON.parse(cliList.stdout) as Array<{ taskId: string; status: string }>;
  assert.deepEqual(
    cliTasks.map((t) => [t.taskId, t.status]),
    [[task.taskId, 'running']],
  );
  const cliText = await runDreact(['tasks', stored], { env });
  assert.equal(cliText.code, 0, cliText.stderr);
  assert.match(cliText.stdout, new RegExp(`${task.taskId}  tk-slow  running`));
  const cliUnknown = await runDreact(['tasks', 'cancel', stored, 'task-nope'], { env });
  assert.equal(cliUnknown.code, 1);
  assert.match(cliUnknown.stderr, /no background task "task-nope" in this conversation/);
  const cliCancel = await runDreact(['tasks', 'cancel', stored, task.taskId], { env });
  assert.equal(cliCancel.code, 0, cliCancel.stderr);
  assert.match(cliCancel.stdout, new RegExp(`cancelling ${task.taskId} \\(subagent tk-slow\\)`));

  // The subagent's turn ends cancelled; the task is recorded cancelled; nothing was delivered.
  const ended = await waitFor('the task cancelled', async () => {
    const r = await call(keys.reader, 'GET', `/v1/conversations/${conv}/tasks`);
    return r.json.tasks[0].status === 'cancelled' ? r.json.tasks[0] : undefined;
  });
  assert.equal(ended.deliveredAt, null);
  const child = await stack.server.env.client.workflow.getHandle(subagentWorkflowId(stored, task.callId)).describe();
  assert.notEqual(child.status.name, 'RUNNING');
  assert.equal((await stack.client.conversationState(stored)).nextTurnIndex, 2, 'no followup turn');
  const again = await call(keys.writer, 'POST', `/v1/conversations/${conv}/tasks/${task.taskId}/cancel`);
  assert.equal(again.status, 409);
  assert.match(again.json.error.message, new RegExp(`task ${task.taskId} is cancelled already`));
});
