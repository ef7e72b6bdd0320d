/**
 * Subagents (agent.delegate, core/agents/subagents.ts): a lead agent delegates a task to a
 * researcher, whose turn runs as a child workflow on its own conversation; its answer and its file
 * come back as the call's result, its usage rolls up to the lead's turn and conversation usage, and
 * Temporal shows the child with a readable summary. A subagent the lead does not list is refused, a
 * subagent at the depth cap is not offered the tool, and a steer or a cancellation of the lead reaches
 * the child.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { callTool, complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents, type Script } from '../support/agent-scripts';
import { loadBlocks } from '../../store/timeline-store';
import { conversationUsage, listConversations } from '../../store/conversation-list-store';
import { subagentConversationId, subagentWorkflowId } from '../../core/agents/subagents';
import { recordHistory } from '../support/fixtures';

/** Scripts by the name an agent file gives (`model.script`). */
const scripts: Record<string, Script> = {
  lead: {
    rounds: [
      callTool('agent.delegate', { agent: 'researcher', task: 'Find the capital of France and note it.' }),
      callTool('agent.delegate', { agent: 'outsider', task: 'Anything.' }),
      complete('The researcher says: Paris.'),
    ],
  },
  researcher: {
    rounds: [
      // At depth 1 with max_depth 1 the researcher is not offered agent.delegate.
      callTool('agent.delegate', { agent: 'helper', task: 'Go deeper.' }),
      callTool('react.write', { path: 'files/capital.md', channel: 'internal', content: '# Paris\n', kind: 'file' }),
      complete('The capital of France is Paris.'),
    ],
  },
  helper: { rounds: [complete('helped')] },
  outsider: { rounds: [complete('outside')] },
  // The steer test: a lead that delegates to a slow child, and the child's finalize answer.
  'lead-steer': {
    rounds: [callTool('agent.delegate', { agent: 'slow', task: 'Think for a long time.' }), complete('unreached')],
    finalize: complete('lead stopped after the steer'),
  },
  slow: {
    rounds: [thinking('slowly '.repeat(400)) + complete('slow answer')],
    finalize: complete('slow child stopped: {{event}}'),
    chunkSize: 4,
    latencyMs: 30,
  },
};

const provider = scriptedAgents(scripts);

let stack: TestStack;
before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-sub-'));
  writeFileSync(path.join(dir, 'lead.yaml'), agentFile('lead', 'subagents: [researcher]\n'));
  writeFileSync(path.join(dir, 'researcher.yaml'), agentFile('researcher', 'subagents: [helper]\nmax_depth: 1\n'));
  writeFileSync(path.join(dir, 'helper.yaml'), agentFile('helper'));
  writeFileSync(path.join(dir, 'outsider.yaml'), agentFile('outsider'));
  writeFileSync(path.join(dir, 'lead-steer.yaml'), agentFile('lead-steer', 'subagents: [slow]\n'));
  writeFileSync(path.join(dir, 'slow.yaml'), agentFile('slow'));
  stack = await createTestStack('subagent');
  await stack.startWorker({ agents: { dir }, provider });
});
after(async () => {
  await stack.teardown();
});

const calls = async (conv: string) =>
  (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.call');
const resultOf = async (conv: string, callId: string) =>
  (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result' && b.call_id === callId);

test('a delegated task runs as a child workflow; its answer, file and usage come back to the parent', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'What is the capital of France?', {}, undefined, undefined, undefined, 'lead');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'The researcher says: Paris.');

  const [delegated, refused] = await calls(conv);
  assert.ok(delegated && refused);
  const child = subagentConversationId(conv, delegated.call_id!);
  const observed = await resultOf(conv, delegated.call_id!);
  assert.equal(observed?.meta.ok, true);
  assert.match(observed!.text ?? '', /^The capital of France is Paris\./);
  assert.match(observed!.text ?? '', /capital\.md/, 'the child file is listed by reference');
  const meta = observed!.meta.subagent as { conversation_id: string; workflow_id: string; files: unknown[] };
  assert.equal(meta.conversation_id, child);
  assert.equal(meta.workflow_id, `conv/${conv}/sub/${delegated.call_id}`);
  assert.equal(meta.files.length, 1);

  // A subagent the lead does not list: refused, no child.
  const refusal = await resultOf(conv, refused.call_id!);
  assert.equal(refusal?.meta.ok, false);
  assert.match(refusal!.text ?? '', /may not delegate to "outsider"/);
  const temporal = stack.server.env.client.workflow;
  await assert.rejects(temporal.getHandle(subagentWorkflowId(conv, refused.call_id!)).describe());

  // The child: its own conversation and timeline; the tool was not offered at the depth cap.
  const childBlocks = await loadBlocks(stack.db.pool, child);
  assert.ok(childBlocks.some((b) => b.type === 'user.prompt' && b.text === 'Find the capital of France and note it.'));
  assert.equal(
    childBlocks.filter((b) => b.type === 'react.tool.call' && String(b.text).includes('agent.delegate')).length,
    0,
    'no delegate call was accepted below the cap',
  );
  assert.match(JSON.stringify(childBlocks.filter((b) => b.type !== 'user.prompt')), /agent\.delegate/);
  await assert.rejects(temporal.getHandle(`conv/${child}/sub/x`).describe());

  // Temporal UI: the child under its deterministic id with a readable summary.
  const described = await temporal.getHandle(meta.workflow_id).describe();
  assert.equal(described.status.name, 'COMPLETED');
  assert.equal(await described.staticSummary(), 'subagent researcher: Find the capital of France and note it.');
  assert.equal(described.parentExecution?.workflowId, `conv/${conv}/turn/1`);

  // Usage: the turn result carries the child's, the conversation usage includes its ledger rows.
  assert.equal(result.subagents, 1);
  assert.ok((result.subagentUsage?.outputTokens ?? 0) > 0);
  const childTurn = await temporal
    .getHandle<() => Promise<{ usage: { outputTokens: number } }>>(meta.workflow_id)
    .result();
  assert.equal(result.subagentUsage?.outputTokens, childTurn.usage.outputTokens);
  const own = await stack.db.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1`, [
    conv,
  ]);
  const sub = await stack.db.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1`, [
    child,
  ]);
  assert.ok(sub.rows[0].n > 0);
  const total = await conversationUsage(stack.db.pool, conv);
  assert.equal(total.calls, own.rows[0].n + sub.rows[0].n);
  // The child belongs to the parent's owner but is reached through the call, not listed.
  const owner = await stack.db.pool.query(`SELECT tenant_id, project_id FROM conversations WHERE id = $1`, [child]);
  assert.deepEqual(owner.rows[0], { tenant_id: 'local', project_id: 'default' });
  const listed = await listConversations(
    stack.db.pool,
    { tenantId: 'local', projectId: 'default', userId: null },
    { limit: 100 },
  );
  assert.ok(listed.some((c) => c.id === conv));
  assert.ok(!listed.some((c) => c.id === child));

  // Replay fixtures of the new shapes (DREACT_RECORD_FIXTURES=1): the delegating turn and its child.
  await recordHistory(stack.server.address, `conv/${conv}/turn/1`, 'turn-subagent-delegate-v7-turn-ref');
  await recordHistory(stack.server.address, meta.workflow_id, 'turn-subagent-child-v7-turn-ref');
});

test("a steer of the parent reaches the child: both finalize, the child's answer is the call's result", async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Delegate something slow.', {}, undefined, undefined, undefined, 'lead-steer');
  const call = await waitFor('the delegate call', async () => (await calls(conv))[0]);
  const child = subagentConversationId(conv, call.call_id!);
  await waitFor('the child to stream', async () => {
    const r = await stack.db.pool.query(
      `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
      [child],
    );
    return r.rows[0].n > 3;
  });
  await stack.client.steer(conv, 'stop now');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'lead stopped after the steer');
  const childResult = await stack.server.env.client.workflow
    .getHandle<() => Promise<{ completionPath: string; answer: string }>>(subagentWorkflowId(conv, call.call_id!))
    .result();
  assert.equal(childResult.completionPath, 'steer_finalize');
  assert.equal(childResult.answer, 'slow child stopped: stop now');
  const observed = await resultOf(conv, call.call_id!);
  assert.equal(observed?.meta.ok, true);
  assert.match(observed!.text ?? '', /^slow child stopped: stop now/);
  assert.equal(result.subagents, 1);
  await recordHistory(stack.server.address, `conv/${conv}/turn/1`, 'turn-subagent-steer-forwarded-v7-turn-ref');
});

test('cancelling the parent turn cancels the running child', async () => {
  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(
    conv,
    'Delegate something slow.',
    {},
    undefined,
    undefined,
    undefined,
    'lead-steer',
  );
  const call = await waitFor('the delegate call', async () => (await calls(conv))[0]);
  const temporal = stack.server.env.client.workflow;
  const childId = subagentWorkflowId(conv, call.call_id!);
  await waitFor('the child to run', async () => {
    const r = await stack.db.pool.query(
      `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'delta'`,
      [subagentConversationId(conv, call.call_id!)],
    );
    return r.rows[0].n > 3;
  });
  await temporal.getHandle(started.workflowId).cancel();
  await waitFor('both to close as cancelled', async () => {
    const [parent, child] = await Promise.all([
      temporal.getHandle(started.workflowId).describe(),
      temporal.getHandle(childId).describe(),
    ]);
    return parent.status.name === 'CANCELLED' && child.status.name === 'CANCELLED';
  });
});
