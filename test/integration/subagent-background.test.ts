/**
 * Background subagents (core/agents/background.ts): `agent.delegate` with `wait: false` returns a
 * receipt at once, the delegating turn ends while the subagent still runs (held at a test gate), and
 * the subagent's answer — its file by reference — arrives later in the parent conversation as a
 * followup that starts the next turn, once. `agent.tasks` lists the task; `agent.cancel` cancels one
 * (its subagent's turn ends `cancelled`, nothing is delivered). An agent whose `background.delegate`
 * is true runs its delegations in the background without `wait`; `on_result: record` keeps the answer
 * on the task and starts no turn.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents, type Script } from '../support/agent-scripts';
import { loadBlocks } from '../../store/timeline-store';
import { conversationUsage } from '../../store/conversation-list-store';
import { loadBackgroundTask } from '../../store/background-task-store';
import { subagentConversationId, subagentWorkflowId } from '../../core/agents/subagents';
import { backgroundTaskId, backgroundTaskWorkflowId } from '../../core/agents/background';
import { roundCallId } from '../../core/turn/round-blocks';
import { turnWorkflowId } from '../../core/turn/ids';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { recordHistory } from '../support/fixtures';

/** Gates the subagent's first call waits at until the test opens them (by name). */
const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
const gate = (name: string) => {
  let g = gates.get(name);
  if (!g) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    g = { open, opened };
    gates.set(name, g);
  }
  return g;
};

const scripts: Record<string, Script> = {
  'bg-lead': {
    rounds: [complete('unused')],
    turns: [
      [
        callTool('agent.delegate', { agent: 'bg-worker', task: 'Write the status report.', wait: false }),
        callTool('agent.tasks', {}),
        complete('lead: the report is on its way'),
      ],
      [complete('lead: I read the report')],
    ],
  },
  'bg-worker': {
    rounds: [
      callTool('test.gate', { name: 'report' }),
      callTool('react.write', { path: 'files/report.md', channel: 'internal', content: '# All green\n', kind: 'file' }),
      complete('report: all green'),
    ],
  },
  // Its rounds are set by the cancel test once it knows the conversation (the task id follows from it).
  'bg-canceller': { rounds: [complete('unused')] },
  'bg-slow': { rounds: [callTool('test.gate', { name: 'cancelled' }), complete('slow: unreached')] },
  'bg-recorder': {
    rounds: [callTool('agent.delegate', { agent: 'bg-quick', task: 'Say done.' }), complete('recorder: started')],
  },
  'bg-quick': { rounds: [complete('quick: done')] },
  // A waited delegation a steer with `detach` sends to the background.
  'dt-lead': {
    rounds: [complete('unused')],
    turns: [
      [callTool('agent.delegate', { agent: 'dt-worker', task: 'Write the audit.' }), complete('lead: unreached')],
      [complete('lead: I read the audit')],
    ],
    finalize: complete('lead: the audit goes on in the background'),
  },
  'dt-worker': { rounds: [callTool('test.gate', { name: 'audit' }), complete('audit: clean')] },
};

let stack: TestStack;
before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-bgsub-'));
  writeFileSync(path.join(dir, 'bg-lead.yaml'), agentFile('bg-lead', 'subagents: [bg-worker]\n'));
  writeFileSync(path.join(dir, 'bg-worker.yaml'), agentFile('bg-worker'));
  writeFileSync(path.join(dir, 'bg-canceller.yaml'), agentFile('bg-canceller', 'subagents: [bg-slow]\n'));
  writeFileSync(path.join(dir, 'bg-slow.yaml'), agentFile('bg-slow'));
  writeFileSync(
    path.join(dir, 'bg-recorder.yaml'),
    agentFile('bg-recorder', 'subagents: [bg-quick]\nbackground: { delegate: true, on_result: record }\n'),
  );
  writeFileSync(path.join(dir, 'bg-quick.yaml'), agentFile('bg-quick'));
  writeFileSync(path.join(dir, 'dt-lead.yaml'), agentFile('dt-lead', 'subagents: [dt-worker]\n'));
  writeFileSync(path.join(dir, 'dt-worker.yaml'), agentFile('dt-worker'));
  stack = await createTestStack('subagent_bg');
  await stack.startWorker({
    agents: { dir },
    provider: scriptedAgents(scripts),
    extraTools: [
      {
        declaration: declareTool({
          id: 'test.gate',
          description: 'Waits until the test opens the gate.',
          params: z.object({ name: z.string() }),
          strategy: 'neutral',
          timeoutMs: 120_000,
          retry: { maximumAttempts: 1 },
          summarize: (p) => `gate ${p.name}`,
        }),
        impl: {
          id: 'test.gate',
          async run(params, ctx) {
            const beat = setInterval(() => ctx.heartbeat(), 300);
            try {
              const aborted = new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
              await Promise.race([gate(String(params.name)).opened, aborted]);
              if (ctx.signal.aborted) throw new Error('gate wait cancelled');
              return { ok: true, text: 'gate open' };
            } finally {
              clearInterval(beat);
            }
          },
        } satisfies ToolImpl,
      },
    ],
  });
});
after(async () => {
  for (const g of gates.values()) g.open();
  await stack.teardown();
});

const temporal = () => stack.server.env.client.workflow;
const resultOf = async (conv: string, callId: string) =>
  (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result' && b.call_id === callId);
const turnCount = async (conv: string) =>
  (await stack.db.pool.query(`SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1`, [conv])).rows[0].n;

test('wait: false returns a receipt, the turn ends first, the answer arrives once as the next turn', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Get me the status report.', {}, undefined, undefined, undefined, 'bg-lead');
  const first = await stack.client.result(conv, 1);
  assert.equal(first.answer, 'lead: the report is on its way');
  assert.ok(!first.subagents, 'the turn did not wait on a subagent');

  const [delegated, listed] = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.call');
  const callId = delegated!.call_id!;
  const taskId = backgroundTaskId(callId);
  const receipt = await resultOf(conv, callId);
  assert.equal(receipt?.meta.ok, true);
  assert.match(receipt!.text ?? '', new RegExp(`^Started background task ${taskId}: subagent bg-worker`));
  assert.deepEqual(receipt!.meta.background_task, {
    task_id: taskId,
    workflow_id: backgroundTaskWorkflowId(conv, callId),
    on_result: 'followup',
  });
  // agent.tasks, in the same turn, listed it as running.
  const tasks = await resultOf(conv, listed!.call_id!);
  assert.match(tasks!.text ?? '', new RegExp(`${taskId}: subagent bg-worker, running`));

  // The turn is over; the task and its subagent's turn still run (held at the gate).
  const task = await temporal().getHandle(backgroundTaskWorkflowId(conv, callId)).describe();
  assert.equal(task.status.name, 'RUNNING');
  assert.equal(task.parentExecution?.workflowId, turnWorkflowId(conv, 1));
  assert.equal(await task.staticSummary(), 'background subagent bg-worker: Write the status report.');
  const childTurn = await temporal().getHandle(subagentWorkflowId(conv, callId)).describe();
  assert.equal(childTurn.status.name, 'RUNNING');
  assert.equal(childTurn.parentExecution?.workflowId, backgroundTaskWorkflowId(conv, callId));
  assert.equal((await loadBackgroundTask(stack.db.pool, conv, taskId))?.status, 'running');
  assert.equal(await turnCount(conv), 1);

  gate('report').open();
  await waitFor('the followup turn', async () => (await stack.client.conversationState(conv)).nextTurnIndex > 2);
  const second = await stack.client.result(conv, 2);
  assert.equal(second.answer, 'lead: I read the report');
  await temporal().getHandle(backgroundTaskWorkflowId(conv, callId)).result();

  // Delivered once: one followup prompt with the answer and the file by reference, one new turn.
  const prompts = (await loadBlocks(stack.db.pool, conv)).filter(
    (b) => b.type === 'user.prompt' && String(b.text).startsWith('[BACKGROUND TASK]'),
  );
  assert.equal(prompts.length, 1);
  assert.match(prompts[0]!.text ?? '', /report: all green/);
  assert.match(prompts[0]!.text ?? '', /files\/report\.md/);
  assert.match(
    prompts[0]!.text ?? '',
    new RegExp(subagentConversationId(conv, callId).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  );
  assert.equal(await turnCount(conv), 2);
  const row = await loadBackgroundTask(stack.db.pool, conv, taskId);
  assert.equal(row?.status, 'completed');
  assert.equal(row?.answer, 'report: all green');
  assert.ok(row?.deliveredAt);

  // Spend rolls up: the conversation's usage counts the subagent's calls.
  const child = subagentConversationId(conv, callId);
  const n = async (c: string) =>
    (await stack.db.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1`, [c])).rows[0]
      .n as number;
  const sub = await n(child);
  assert.ok(sub > 0);
  assert.equal((await conversationUsage(stack.db.pool, conv)).calls, (await n(conv)) + sub);

  // Replay fixtures of the new shapes (DREACT_RECORD_FIXTURES=1): the turn that started a task, the task.
  await recordHistory(stack.server.address, turnWorkflowId(conv, 1), 'turn-subagent-background-v8');
  await recordHistory(stack.server.address, backgroundTaskWorkflowId(conv, callId), 'background-task-delivered-v8');
});

test('agent.cancel cancels a running task: its subagent turn ends cancelled and nothing is delivered', async () => {
  const conv = uniqueId('conv');
  const callId = roundCallId(turnWorkflowId(conv, 1), 1, 0);
  scripts['bg-canceller'] = {
    rounds: [
      callTool('agent.delegate', { agent: 'bg-slow', task: 'Take your time.', wait: false }),
      callTool('agent.cancel', { task_id: backgroundTaskId(callId) }),
      complete('canceller: cancelled it'),
    ],
  };
  await stack.client.startTurn(conv, 'Start then stop a task.', {}, undefined, undefined, undefined, 'bg-canceller');
  const first = await stack.client.result(conv, 1);
  assert.equal(first.answer, 'canceller: cancelled it');
  const calls = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.call');
  assert.equal(calls[0]!.call_id, callId);
  const cancelled = await resultOf(conv, calls[1]!.call_id!);
  assert.equal(cancelled?.meta.ok, true, cancelled?.text ?? '');

  const outcome = await temporal()
    .getHandle<() => Promise<{ status: string; delivered: boolean }>>(backgroundTaskWorkflowId(conv, callId))
    .result();
  assert.deepEqual({ status: outcome.status, delivered: outcome.delivered }, { status: 'cancelled', delivered: false });
  const childTurn = await stack.db.pool.query(`SELECT status, completion_path FROM turns WHERE conversation_id = $1`, [
    subagentConversationId(conv, callId),
  ]);
  assert.equal(childTurn.rows[0].completion_path, 'cancelled');
  const row = await loadBackgroundTask(stack.db.pool, conv, backgroundTaskId(callId));
  assert.equal(row?.status, 'cancelled');
  assert.equal(row?.deliveredAt, null);
  assert.equal(await turnCount(conv), 1);
  const state = await stack.client.conversationState(conv);
  assert.equal(state.nextTurnIndex, 2, 'no turn was queued for the cancelled task');

  // A second cancel is refused with an observation naming the state (the model sees it).
  scripts['bg-canceller'] = {
    rounds: [callTool('agent.cancel', { task_id: backgroundTaskId(callId) }), complete('canceller: again')],
  };
  await stack.client.startTurn(conv, 'Cancel it again.', {}, undefined, undefined, undefined, 'bg-canceller');
  await stack.client.result(conv, 2);
  const again = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result').at(-1);
  assert.equal(again?.meta.ok, false);
  assert.match(again?.text ?? '', /is cancelled already/);
});

test('background.delegate runs calls in the background without wait; on_result: record starts no turn', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Start it.', {}, undefined, undefined, undefined, 'bg-recorder');
  assert.equal((await stack.client.result(conv, 1)).answer, 'recorder: started');
  const call = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call')!;
  const receipt = await resultOf(conv, call.call_id!);
  assert.match(receipt?.text ?? '', /kept on the task: read it with agent\.tasks/);
  const outcome = await temporal()
    .getHandle<() => Promise<{ status: string; delivered: boolean }>>(backgroundTaskWorkflowId(conv, call.call_id!))
    .result();
  assert.deepEqual({ status: outcome.status, delivered: outcome.delivered }, { status: 'completed', delivered: false });
  const row = await waitFor('the recorded task', async () => {
    const r = await loadBackgroundTask(stack.db.pool, conv, backgroundTaskId(call.call_id!));
    return r?.status === 'completed' ? r : undefined;
  });
  assert.equal(row.answer, 'quick: done');
  assert.equal(await turnCount(conv), 1);
  assert.equal((await stack.client.conversationState(conv)).nextTurnIndex, 2);
});

test('a steer with detach sends a waited delegate to the background: receipt, the child goes on, its answer arrives once', async () => {
  const conv = uniqueId('conv');
  const callId = roundCallId(turnWorkflowId(conv, 1), 1, 0);
  const childId = subagentWorkflowId(conv, callId);
  await stack.client.startTurn(conv, 'Get me the audit.', {}, undefined, undefined, undefined, 'dt-lead');
  // The child is held at its gate while the parent waits on it.
  await waitFor('the child at its gate', async () => {
    const calls = (await loadBlocks(stack.db.pool, subagentConversationId(conv, callId))).filter(
      (b) => b.type === 'react.tool.call',
    );
    return calls.length > 0;
  });
  const child = await temporal().getHandle(childId).describe();
  assert.equal(child.parentExecution?.workflowId, turnWorkflowId(conv, 1));

  await stack.client.steer(conv, 'do not wait for it', undefined, { detach: true });
  const first = await stack.client.result(conv, 1);
  assert.equal(first.completionPath, 'steer_finalize');
  assert.equal(first.answer, 'lead: the audit goes on in the background');
  const taskId = backgroundTaskId(callId);
  const receipt = await resultOf(conv, callId);
  assert.equal(receipt?.meta.ok, true);
  assert.match(receipt!.text ?? '', new RegExp(`^Started background task ${taskId}: subagent dt-worker`));
  // The parent turn is over; its child still runs (abandoned), not steered; the task lists it.
  assert.equal((await temporal().getHandle(childId).describe()).status.name, 'RUNNING');
  assert.equal((await loadBackgroundTask(stack.db.pool, conv, taskId))?.status, 'running');
  assert.equal(await turnCount(conv), 1);

  gate('audit').open();
  const childResult = await temporal()
    .getHandle<() => Promise<{ completionPath: string; answer: string }>>(childId)
    .result();
  assert.equal(childResult.answer, 'audit: clean', 'the child was not steered');
  await waitFor('the followup turn', async () => (await stack.client.conversationState(conv)).nextTurnIndex > 2);
  assert.equal((await stack.client.result(conv, 2)).answer, 'lead: I read the audit');
  const task = await temporal().getHandle(backgroundTaskWorkflowId(conv, callId)).result();
  assert.equal(task.delivered, true);
  const prompts = (await loadBlocks(stack.db.pool, conv)).filter(
    (b) => b.type === 'user.prompt' && String(b.text).startsWith('[BACKGROUND TASK]'),
  );
  assert.equal(prompts.length, 1);
  assert.match(prompts[0]!.text ?? '', /audit: clean/);
  assert.equal(await turnCount(conv), 2);
  const row = await loadBackgroundTask(stack.db.pool, conv, taskId);
  assert.equal(row?.status, 'completed');
  assert.ok(row?.deliveredAt);

  await recordHistory(stack.server.address, turnWorkflowId(conv, 1), 'turn-subagent-detached-v9');
  await recordHistory(stack.server.address, backgroundTaskWorkflowId(conv, callId), 'background-task-adopted-v9');
});
