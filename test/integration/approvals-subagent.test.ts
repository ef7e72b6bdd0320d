/**
 * A subagent's approval request surfaces in the parent conversation (issue 30): a lead agent
 * delegates to a helper whose tool needs approval; the call waits in the helper's turn (a child
 * workflow on its own conversation), and from the PARENT conversation it is listed (client, CLI
 * `dreact approvals`, gateway `GET …/approvals`), announced on the parent's stream (`approval`
 * event, what the web chat's cards refetch on), and decided (`dreact approve <parent> <callId>`,
 * gateway `POST …/approvals/:callId`): the helper's call runs once and the lead answers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents, type Script } from '../support/agent-scripts';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { subagentConversationId } from '../../core/agents/subagents';
import type { RunningGateway } from '../../apps/gateway/server';
import { DreactClient } from '../../client/api';
import { turnStateQuery } from '../../contract/definitions';
import { conversationSpace } from '../../core/tenancy/conversation-space';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

const email = { to: 'ops@example.com', body: 'hello' };
const scripts: Record<string, Script> = {
  lead: {
    rounds: [
      callTool('agent.delegate', { agent: 'helper', task: 'Send the mail to ops.' }),
      complete('lead: the helper sent it'),
    ],
  },
  helper: { rounds: [callTool('test.send', email, 'the lead asked me to send it'), complete('helper: sent')] },
};
const provider = scriptedAgents(scripts);

let stack: TestStack;
let gw: RunningGateway;
const keys = { approver: '', writer: '' };
const runs: Array<{ conversationId: string; params: Record<string, unknown> }> = [];

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-subapproval-'));
  writeFileSync(path.join(dir, 'lead.yaml'), agentFile('lead', 'subagents: [helper]\n'));
  writeFileSync(path.join(dir, 'helper.yaml'), agentFile('helper', 'approval: { tools: [test.send] }\n'));
  stack = await createTestStack('subapproval');
  await stack.startWorker({
    agents: { dir },
    provider,
    extraTools: [
      {
        declaration: declareTool({
          id: 'test.send',
          description: 'Sends a mail.',
          params: z.object({ to: z.string().email(), body: z.string() }),
          strategy: 'exploitation',
          timeoutMs: 10_000,
          retry: { maximumAttempts: 1 },
          summarize: (p) => `tool test.send to ${p.to}`,
        }),
        impl: {
          id: 'test.send',
          async run(params, ctx) {
            runs.push({ conversationId: ctx.conversationId, params });
            return { ok: true, text: 'sent' };
          },
        } satisfies ToolImpl,
      },
    ],
  });
  keys.approver = await stack.apiKey(['read', 'approve'], { userId: 'ann' });
  keys.writer = await stack.apiKey(['read', 'write'], { userId: 'ann' });
  gw = await stack.startGateway();
});
after(async () => {
  await stack.teardown();
});

/** A client that also reads the request blocks (params, reason) from Postgres. */
const withDb = () => new DreactClient(stack.server.env.client, { taskQueue: stack.taskQueue, db: stack.db.pool });

const dreact = (args: string[]) => runDreact(args, { env: stackCliEnv(stack) });

test("the parent lists a subagent's waiting call, its stream announces it, and the CLI decides it from the parent", async () => {
  const conv = uniqueId('conv');
  runs.length = 0;
  await stack.client.startTurn(conv, 'get the mail sent', {}, undefined, undefined, undefined, 'lead');
  const [item] = await waitFor('the subagent call listed in the parent', async () => {
    const items = await withDb()
      .approvals(conv)
      .catch(() => []);
    return items.length > 0 ? items : undefined;
  });
  assert.equal(item!.toolId, 'test.send');
  assert.deepEqual(item!.params, email);
  assert.match(item!.reason ?? '', /the lead asked me to send it/);
  assert.equal(item!.subagent?.agent, 'helper');
  const child = subagentConversationId(conv, item!.subagent!.delegateCallId);
  assert.equal(item!.workflowId, `conv/${conv}/sub/${item!.subagent!.delegateCallId}`);
  const childState = await stack.server.env.client.workflow.getHandle(item!.workflowId!).query(turnStateQuery);
  assert.equal(childState.status, 'awaiting_approval');

  // The parent's own stream carries the request (under its running turn), marked as the subagent's.
  const events = await waitFor('the approval event on the parent stream', async () => {
    const evs = (await readEvents(stack.db.pool, conv, 0)).filter((e) => e.kind === 'approval');
    return evs.length > 0 ? evs : undefined;
  });
  const requested = events[0]!;
  assert.equal(requested.turnId, 'turn_1');
  assert.equal(requested.payload.phase, 'requested');
  assert.equal(requested.payload.callId, item!.callId);
  assert.deepEqual(requested.payload.subagent, {
    agent: 'helper',
    delegateCallId: item!.subagent!.delegateCallId,
    depth: 1,
  });

  const listed = await dreact(['approvals', conv]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`${item!.callId}  test\\.send`));
  assert.match(listed.stdout, /in subagent helper \(the delegate call tc_[0-9a-f]+\)/);
  assert.equal(runs.length, 0, 'nothing ran before the decision');

  const approved = await dreact(['approve', conv, item!.callId, '--reason', 'fine by me']);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, /approved by/);
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'lead: the helper sent it');
  assert.deepEqual(runs, [{ conversationId: child, params: email }], 'the call ran once, in the subagent');
  const decision = (await loadBlocks(stack.db.pool, child)).find((b) => b.type === 'stage.approval.decision');
  assert.match(decision?.text ?? '', /approved by .*: fine by me/);
  const decided = (await readEvents(stack.db.pool, conv, 0)).filter(
    (e) => e.kind === 'approval' && e.payload.phase === 'decided',
  );
  assert.equal(decided.length, 1, "the decision reaches the parent's stream too");
});

test("gateway: a subagent's call is in the parent's approvals and a deny from the parent reaches it", async () => {
  const conv = uniqueId('c');
  runs.length = 0;
  const call = async (k: string, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${gw.url}${p}`, {
      method,
      headers: { 'x-api-key': k, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const started = await call(keys.writer, 'POST', `/v1/conversations/${conv}/turns`, {
    prompt: 'get the mail sent',
    agent: 'lead',
  });
  assert.ok(started.status < 300, JSON.stringify(started.json));
  const listed = await waitFor('the subagent call in the parent approvals', async () => {
    const r = await call(keys.writer, 'GET', `/v1/conversations/${conv}/approvals`);
    return r.json.approvals?.length ? r.json.approvals : undefined;
  });
  assert.equal(listed[0].toolId, 'test.send');
  assert.equal(listed[0].subagent.agent, 'helper');
  const p = `/v1/conversations/${conv}/approvals/${listed[0].callId}`;
  assert.equal((await call(keys.writer, 'POST', p, { decision: 'approve' })).status, 403);
  const denied = await call(keys.approver, 'POST', p, { decision: 'deny', reason: 'not to ops' });
  assert.equal(denied.status, 200, JSON.stringify(denied.json));
  assert.equal(denied.json.decided.by, 'ann');
  // The stored id is in the key's conversation space (tenant, project, user).
  const stored = `${conversationSpace({ tenantId: 'acme', projectId: 'web', userId: 'ann' })}${conv}`;
  const result = await stack.client.result(stored, 1);
  assert.equal(result.answer, 'lead: the helper sent it');
  assert.equal(runs.length, 0, 'a denied call never runs');
  const child = subagentConversationId(stored, listed[0].subagent.delegateCallId);
  const observed = (await loadBlocks(stack.db.pool, child)).find((b) => b.type === 'react.tool.result');
  assert.equal(observed?.text, 'denied by ann: not to ops');
  assert.equal((await call(keys.approver, 'POST', p, { decision: 'approve' })).status, 404);
});
