/**
 * Human approval of tool calls (issue 30) through real Temporal + Postgres + worker: a call that
 * needs approval waits in the turn workflow for the decideToolCall Update — approve, deny, edit
 * (a bad edit rejected, nothing in history), timeout (deny or fail, by the agent's setting), a
 * steer while waiting, a worker killed while waiting and while an approved call runs (it runs
 * once), concurrent calls approved one by one, and a principal without the approve scope.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import {
  callTool,
  complete,
  createTestStack,
  decision,
  thinking,
  uniqueId,
  waitFor,
  type TestStack,
} from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import type { ToolImpl } from '../../activities/tools/types';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import { decideToolCallUpdate } from '../../contract/definitions';
import { turnWorkflowId } from '../../core/turn/contracts';
import { DreactError } from '../../client/api';
import { ApprovalError } from '../../client/approvals';
import type { ApprovalPrincipal } from '../../core/governance/approval';

let stack: TestStack;
const runs: Array<{ tool: string; params: Record<string, unknown> }> = [];
/** Attempts of the slow tool: the first waits until its worker stops (aborted), later ones finish. */
const slow = { attempts: 0 };

const alice: ApprovalPrincipal = {
  tenantId: 'local',
  projectId: 'default',
  userId: 'alice',
  keyId: 'k_alice',
  scopes: ['read', 'approve'],
};
const writer: ApprovalPrincipal = { ...alice, userId: 'bob', keyId: 'k_bob', scopes: ['read', 'write'] };

const tool = (
  id: string,
  opts: { needsApproval?: boolean; strategy?: 'exploration' | 'exploitation'; slow?: boolean },
) =>
  ({
    declaration: declareTool({
      id,
      description: `Test tool ${id}.`,
      params: z.object({ to: z.string().email(), body: z.string().min(1) }),
      strategy: opts.strategy ?? 'exploitation',
      timeoutMs: 30_000,
      retry: { maximumAttempts: 3, initialInterval: 100 },
      summarize: (p) => `tool ${id} to ${p.to}`,
      ...(opts.needsApproval !== undefined ? { needsApproval: opts.needsApproval } : {}),
    }),
    impl: {
      id,
      async run(params, ctx) {
        if (opts.slow && ++slow.attempts === 1)
          await new Promise<void>((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(new Error('worker stopped'))),
          );
        runs.push({ tool: id, params });
        return { ok: true, text: `sent to ${String(params.to)}` };
      },
    } satisfies ToolImpl,
  }) as { declaration: AnyToolDeclaration; impl: ToolImpl };

const agentsDir = mkdtempSync(path.join(os.tmpdir(), 'dreact-approval-agents-'));
writeFileSync(
  path.join(agentsDir, 'quick.yaml'),
  'name: quick\napproval: { tools: [test.notify], timeout_seconds: 2 }\n',
);
writeFileSync(
  path.join(agentsDir, 'strict.yaml'),
  'name: strict\napproval: { tools: [test.notify], timeout_seconds: 2, on_timeout: fail }\n',
);
writeFileSync(path.join(agentsDir, 'gated.yaml'), 'name: gated\napproval: { tools: [test.notify, test.look_*] }\n');

const workerOptions = {
  extraTools: [
    tool('test.send', { needsApproval: true }),
    tool('test.notify', {}),
    tool('test.slow_send', { needsApproval: true, slow: true }),
    tool('test.look_a', { strategy: 'exploration' }),
    tool('test.look_b', { strategy: 'exploration' }),
  ],
  multiAction: 'safe_fanout' as const,
  agents: { dir: agentsDir },
};

before(async () => {
  stack = await createTestStack('approvals');
  await stack.startWorker(workerOptions);
});
after(async () => stack.teardown());

const scripted = (...rounds: string[]) => ({ model: { provider: 'scripted' as const, script: { rounds } } });
const email = { to: 'ops@example.com', body: 'hello' };

async function waitingCall(conv: string, n = 1) {
  return waitFor(`${n} call(s) waiting for approval`, async () => {
    const items = await stack.client.approvals(conv).catch(() => []);
    return items.length >= n ? items : undefined;
  });
}

async function updateEvents(workflowId: string): Promise<number> {
  const events = (await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

const dbClient = () =>
  new (stack.client.constructor as typeof import('../../client/api').DreactClient)(stack.server.env.client, {
    taskQueue: stack.taskQueue,
    db: stack.db.pool,
  });

test('approve: the call waits (awaiting_approval, request block, pending query), then runs once', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(
    conv,
    'send it',
    scripted(callTool('test.send', email, 'the user asked to send it'), complete('sent')),
  );
  const client = dbClient();
  const [item] = await waitingCall(conv);
  const pending = (await client.approvals(conv))[0]!;
  assert.equal(item!.toolId, 'test.send');
  assert.deepEqual(pending.params, email);
  assert.match(pending.reason ?? '', /the user asked to send it/);
  assert.ok(pending.paramsSchema, 'the request block records the params schema');
  assert.equal((await stack.client.turnState(conv, 1)).status, 'awaiting_approval');
  assert.equal(runs.length, 0, 'nothing ran before the decision');
  const decided = await client.decideToolCall(conv, { callId: item!.callId, decision: 'approve' }, alice);
  assert.equal(decided.by, 'alice');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'sent');
  assert.equal(runs.length, 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const types = blocks.map((b) => b.type);
  assert.ok(types.indexOf('stage.approval.request') < types.indexOf('stage.approval.decision'));
  assert.ok(types.indexOf('stage.approval.decision') < types.indexOf('react.tool.result'));
  assert.match(blocks.find((b) => b.type === 'stage.approval.decision')!.text ?? '', /approved by alice/);
  // The decision is in history once; a resend of the same decision gets it back.
  assert.equal(await updateEvents(r.workflowId), 1);
});

test('deny: the call becomes "denied by <user>: <reason>" and never runs; the model sees it', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(conv, 'send it', scripted(callTool('test.send', email), complete('not sent')));
  const [item] = await waitingCall(conv);
  await stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'deny', reason: 'not today' }, alice);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'not sent');
  assert.equal(runs.length, 0);
  const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result')!;
  assert.equal(result.text, 'denied by alice: not today');
  assert.equal(result.meta.ok, false);
});

test('edit: bad params are rejected before history; good ones run (recorded in the timeline)', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(conv, 'send it', scripted(callTool('test.send', email), complete('edited')));
  const client = dbClient();
  const [item] = await waitingCall(conv);
  await assert.rejects(
    client.decideToolCall(
      conv,
      { callId: item!.callId, decision: 'edit', params: { to: 'not-an-email', body: 'x' } },
      alice,
    ),
    (err: DreactError) => err.code === 'bad_input' && /to/.test(err.message),
  );
  // Straight to the workflow: a malformed edit (not an object) is refused by the validator.
  const wf = turnWorkflowId(conv, 1);
  await assert.rejects(
    stack.server.env.client.workflow.getHandle(wf).executeUpdate(decideToolCallUpdate, {
      args: [
        {
          callId: item!.callId,
          decision: 'edit',
          params: 'nope' as unknown as Record<string, unknown>,
          principal: alice,
        },
      ],
    }),
    WorkflowUpdateFailedError,
  );
  assert.equal(await updateEvents(wf), 0, 'rejected updates never reach history');
  const edited = { to: 'boss@example.com', body: 'edited body' };
  await client.decideToolCall(conv, { callId: item!.callId, decision: 'edit', params: edited }, alice);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'edited');
  assert.deepEqual(runs, [{ tool: 'test.send', params: edited }]);
  const decisionBlock = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'stage.approval.decision')!;
  assert.deepEqual(decisionBlock.meta.params, edited);
});

test('a principal without the approve scope is rejected (client and validator); unknown calls too', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(conv, 'send it', scripted(callTool('test.send', email), complete('done')));
  const [item] = await waitingCall(conv);
  await assert.rejects(
    stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'approve' }, writer),
    (err: ApprovalError) => err.code === 'forbidden',
  );
  const wf = turnWorkflowId(conv, 1);
  const handle = stack.server.env.client.workflow.getHandle(wf);
  await assert.rejects(
    handle.executeUpdate(decideToolCallUpdate, {
      args: [{ callId: item!.callId, decision: 'approve', principal: writer }],
    }),
    (err: WorkflowUpdateFailedError) => /approve scope/.test(err.cause?.message ?? ''),
  );
  await assert.rejects(
    handle.executeUpdate(decideToolCallUpdate, {
      args: [{ callId: 'tc_000000000000', decision: 'approve', principal: alice }],
    }),
    (err: WorkflowUpdateFailedError) => /not waiting/.test(err.cause?.message ?? ''),
  );
  assert.equal(await updateEvents(wf), 0);
  assert.equal(runs.length, 0);
  await stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'approve' }, alice);
  await stack.client.result(conv, 1);
  // Decided already: a second, different decision is refused.
  assert.equal(runs.length, 1);
});

test("timeout: the agent's wait ends as a deny (default) or fails the turn (on_timeout: fail)", async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(
    conv,
    'notify',
    scripted(callTool('test.notify', email), complete('timed out')),
    undefined,
    undefined,
    undefined,
    'quick',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'timed out');
  assert.equal(runs.length, 0);
  const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result')!;
  assert.match(result.text ?? '', /nobody approved the call within 2 s/);

  const strict = uniqueId('conv');
  await stack.client.startTurn(
    strict,
    'notify',
    scripted(callTool('test.notify', email), complete('never')),
    undefined,
    undefined,
    undefined,
    'strict',
  );
  await assert.rejects(stack.client.result(strict, 1), (err: Error & { cause?: Error }) =>
    /waited 2 s for approval/.test(String(err.cause?.message)),
  );
  assert.equal(runs.length, 0);
});

test('a steer while waiting ends the wait and the turn finalizes', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(conv, 'send it', scripted(callTool('test.send', email), complete('not reached')));
  await waitingCall(conv);
  await stack.client.steer(conv, 'forget it');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'steer_finalize');
  assert.equal(runs.length, 0);
});

test('concurrent calls of one round wait together and are approved one by one', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  const both =
    thinking('both') +
    decision({ action: 'call_tool', notes: 'look a', tool_call: { tool_id: 'test.look_a', params: email } }) +
    decision({ action: 'call_tool', notes: 'look b', tool_call: { tool_id: 'test.look_b', params: email } });
  await stack.client.startTurn(
    conv,
    'look',
    scripted(both, complete('looked')),
    undefined,
    undefined,
    undefined,
    'gated',
  );
  const items = await waitingCall(conv, 2);
  assert.deepEqual(items.map((i) => i.toolId).sort(), ['test.look_a', 'test.look_b']);
  const b = items.find((i) => i.toolId === 'test.look_b')!;
  await stack.client.decideToolCall(conv, { callId: b.callId, decision: 'deny', reason: 'no b' }, alice);
  await waitFor('one call left', async () => ((await stack.client.approvals(conv)).length === 1 ? true : undefined));
  assert.equal(runs.length, 0, 'the other call still waits');
  const a = items.find((i) => i.toolId === 'test.look_a')!;
  await stack.client.decideToolCall(conv, { callId: a.callId, decision: 'approve' }, alice);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'looked');
  assert.deepEqual(
    runs.map((x) => x.tool),
    ['test.look_a'],
  );
  const results = (await loadBlocks(stack.db.pool, conv)).filter((x) => x.type === 'react.tool.result');
  assert.equal(results.length, 2, 'every call has its result, in call order');
  assert.match(results[1]!.text ?? '', /denied by alice: no b/);
});

test('a worker killed while a turn waits, and while the approved call runs: the call runs once', async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  slow.attempts = 0;
  await stack.client.startTurn(conv, 'send slowly', scripted(callTool('test.slow_send', email), complete('done once')));
  const [item] = await waitingCall(conv);
  await stack.stopWorker();
  // Nothing runs while no worker does; the wait lives in the server.
  await stack.startWorker(workerOptions);
  const again = await waitingCall(conv);
  assert.equal(again[0]!.callId, item!.callId, 'the same call still waits after a restart');
  await stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'approve' }, alice);
  await waitFor('the approved call to start', async () => slow.attempts >= 1);
  await stack.stopWorker(); // the running attempt is cancelled with its worker
  await stack.startWorker(workerOptions);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'done once');
  assert.equal(runs.length, 1, 'the approved call ran once');
  assert.equal(slow.attempts, 2, 'retried on the new worker, not asked for approval again');
  assert.equal((await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'stage.approval.request').length, 1);
});
