/**
 * Tool policies per tenant and project (issue 30) through real Temporal + Postgres + worker: a
 * denied tool is absent from the prompt and refused when called anyway (no run); a policy's
 * require-approval list makes calls wait for a person; a tool denied while its call waited is
 * refused by the tool activity (defence in depth: a notice, never a run).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import type { ToolImpl } from '../../activities/tools/types';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import { setToolPolicy } from '../../store/policy-store';
import { createScriptedProvider, resolveScript } from '../../activities/providers/scripted';
import type { ModelConfig } from '../../core/model/config';
import type { ModelProvider, ModelRequest } from '../../core/model/provider';

let stack: TestStack;
const runs: string[] = [];
const systems: string[] = [];

const tool = (id: string): { declaration: AnyToolDeclaration; impl: ToolImpl } => ({
  declaration: declareTool({
    id,
    description: `Test tool ${id}.`,
    params: z.object({ q: z.string() }),
    strategy: 'exploitation',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool ${id} ${p.q}`,
  }),
  impl: {
    id,
    async run() {
      runs.push(id);
      return { ok: true, text: `${id} ran` };
    },
  },
});

function recording(inner: ModelProvider): ModelProvider {
  return {
    id: inner.id,
    ...(inner.model ? { model: inner.model } : {}),
    stream(request: ModelRequest, options) {
      systems.push(request.system.map((s) => s.text).join('\n'));
      return inner.stream(request, options);
    },
  };
}

before(async () => {
  stack = await createTestStack('policies');
  await stack.startWorker({
    extraTools: [tool('test.secret'), tool('test.notify'), tool('test.open')],
    provider: (cfg: ModelConfig) => recording(createScriptedProvider(resolveScript(cfg.script))),
  });
});
after(async () => stack.teardown());

const scripted = (...rounds: string[]) => ({ model: { provider: 'scripted' as const, script: { rounds } } });
const policy = (p: Partial<{ allow: string[]; deny: string[]; requireApproval: string[] }>) =>
  setToolPolicy(stack.db.pool, 'local', 'default', { allow: [], deny: [], requireApproval: [], ...p });
/** Policies are read at most every 2 s per project by a worker. */
const settle = () => new Promise((r) => setTimeout(r, 2_200));

test('a denied tool is absent from the prompt and refused when called anyway', async () => {
  await setToolPolicy(stack.db.pool, 'local', '*', { allow: [], deny: ['test.secret'], requireApproval: [] });
  await settle();
  try {
    runs.length = 0;
    systems.length = 0;
    const conv = uniqueId('conv');
    await stack.client.startTurn(
      conv,
      'use the secret',
      scripted(callTool('test.secret', { q: 'x' }), complete('done')),
    );
    const r = await stack.client.result(conv, 1);
    assert.equal(r.answer, 'done');
    const decisionSystems = systems.filter((s) => s.includes('test.open'));
    assert.ok(decisionSystems.length > 0, 'the round prompts list the other tools');
    assert.ok(
      decisionSystems.every((s) => !s.includes('test.secret')),
      'the denied tool is not in the prompt',
    );
    assert.deepEqual(runs, [], 'the denied tool never ran');
    const blocks = await loadBlocks(stack.db.pool, conv);
    assert.ok(
      blocks.some((b) => b.type === 'react.notice' && /test\.secret/.test(b.text ?? '')),
      'the model is told the call was refused',
    );
  } finally {
    await setToolPolicy(stack.db.pool, 'local', '*', { allow: [], deny: [], requireApproval: [] });
  }
});

test("a policy's require-approval list makes calls wait; a tool denied meanwhile is refused by the tool activity", async () => {
  await policy({ requireApproval: ['test.notify'] });
  await settle();
  try {
    runs.length = 0;
    const conv = uniqueId('conv');
    await stack.client.startTurn(conv, 'notify', scripted(callTool('test.notify', { q: 'x' }), complete('done')));
    const [item] = await waitFor('the call to wait for approval', async () => {
      const items = await stack.client.approvals(conv).catch(() => []);
      return items.length > 0 ? items : undefined;
    });
    assert.equal(item!.toolId, 'test.notify');
    // The policy changes while the call waits: approved, it still never runs.
    await policy({ deny: ['test.notify'] });
    await settle();
    await stack.client.decideToolCall(conv, { callId: item!.callId, decision: 'approve' });
    const r = await stack.client.result(conv, 1);
    assert.equal(r.answer, 'done');
    assert.deepEqual(runs, []);
    const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result')!;
    assert.match(result.text ?? '', /tool test\.notify is denied by the tenant's tool policy/);
    assert.equal(result.meta.policy_denied, true);
  } finally {
    await policy({});
  }
});

test('an allow list narrows the tools to those it matches', async () => {
  await policy({ allow: ['react.*', 'test.open'] });
  await settle();
  try {
    systems.length = 0;
    const conv = uniqueId('conv');
    await stack.client.startTurn(conv, 'hi', scripted(complete('hello')));
    await stack.client.result(conv, 1);
    const round = systems.find((s) => s.includes('test.open'))!;
    assert.ok(round, 'the allowed tool is offered');
    assert.ok(!round.includes('test.notify') && !round.includes('test.secret'));
  } finally {
    await policy({});
  }
});
