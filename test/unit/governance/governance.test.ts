import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { decisionProblem, type ApprovalPrincipal } from '../../../core/governance/approval';
import { effectivePolicy, governRegistry, policyIssues, policyRefusal } from '../../../core/governance/policy';
import { budgetExceededAnswer, worstCaseUsd } from '../../../core/governance/budget';
import { declareTool, ToolRegistry } from '../../../core/tools/registry';
import { toolCallPlan } from '../../../core/tools/call-plan';
import { approvalRefusal, toolCallRefusal } from '../../../core/governance/tool-call';

const alice: ApprovalPrincipal = { tenantId: 't', projectId: 'p', userId: 'alice', keyId: 'k', scopes: ['approve'] };
const pending = new Set(['tc_000000000001']);
const none = new Set<string>();

test('the Update validator: scope, unknown and decided calls, malformed edits', () => {
  const ok = { callId: 'tc_000000000001', decision: 'approve' as const, principal: alice };
  assert.equal(decisionProblem(ok, pending, none), undefined);
  assert.match(
    decisionProblem({ ...ok, principal: { ...alice, scopes: ['read', 'write'] } }, pending, none)!,
    /approve scope/,
  );
  assert.equal(decisionProblem({ ...ok, principal: { ...alice, scopes: ['admin'] } }, pending, none), undefined);
  assert.match(decisionProblem({ ...ok, callId: 'tc_000000000002' }, pending, none)!, /not waiting/);
  assert.match(decisionProblem(ok, pending, pending)!, /already decided/);
  assert.match(decisionProblem({ ...ok, decision: 'edit' }, pending, none)!, /needs params/);
  assert.match(
    decisionProblem({ ...ok, decision: 'edit', params: [] as unknown as Record<string, unknown> }, pending, none)!,
    /JSON object/,
  );
  assert.match(decisionProblem({ ...ok, params: { a: 1 } }, pending, none)!, /only for an edit/);
  assert.match(decisionProblem({ ...ok, decision: 'maybe' as 'approve' }, pending, none)!, /approve, deny or edit/);
});

const decl = (id: string, needsApproval?: boolean | ((p: { n: number }) => boolean)) =>
  declareTool({
    id,
    description: id,
    params: z.object({ n: z.number() }),
    strategy: 'exploration',
    timeoutMs: 1000,
    retry: { maximumAttempts: 1 },
    summarize: () => id,
    ...(needsApproval !== undefined ? { needsApproval } : {}),
  });

test('plans carry approval from the declaration, the agent and the policy; deny removes tools', () => {
  const registry = new ToolRegistry([
    decl('a.own', true),
    decl('a.fn', (p) => p.n > 1),
    decl('b.agent'),
    decl('c.pol'),
    decl('d.gone'),
  ]);
  const policy = effectivePolicy([
    { allow: [], deny: ['d.*'], requireApproval: ['c.*'] },
    { allow: ['a.*', 'b.*', 'c.*'], deny: [], requireApproval: [] },
  ]);
  const governed = governRegistry(registry, policy, { agentTools: ['b.*'], timeoutSeconds: 60, onTimeout: 'fail' });
  assert.deepEqual(governed.ids(), ['a.own', 'a.fn', 'b.agent', 'c.pol']);
  const plan = (id: string, n = 1) => toolCallPlan('tc_000000000001', id, governed.activityOptions(id, { n })).approval;
  assert.deepEqual(plan('a.own'), { source: 'tool', timeoutSeconds: 60, onTimeout: 'fail' });
  assert.equal(plan('a.fn', 1), undefined);
  assert.equal(plan('a.fn', 2)?.source, 'tool');
  assert.equal(plan('b.agent')?.source, 'agent');
  assert.equal(plan('c.pol')?.source, 'policy');
  assert.equal(new ToolRegistry([decl('x.y')]).activityOptions('x.y', { n: 1 }).approval, undefined);
  assert.match(policyRefusal(policy, 'd.gone')!, /denied by the tenant's tool policy \(d\.\*\)/);
  assert.match(policyRefusal(policy, 'e.other')!, /not in the tenant's tool policy allow list/);
  assert.deepEqual(policyIssues({ deny: ['!x'], allow: ['Bad Id'] }).length, 2);
});

test('worst case of a call and the budget_exceeded answer', () => {
  // 1 000 input tokens at the cache-write rate (1.25 × 1) + 1 000 output tokens at 5 USD / MTok.
  assert.equal(worstCaseUsd(1000, 1000, 'claude-haiku-4-5'), (1000 * 1.25 + 1000 * 5) / 1e6);
  assert.equal(worstCaseUsd(1000, 1000, 'unpriced-model', 'custom'), 0);
  assert.match(
    budgetExceededAnswer({ label: 'tenant acme, per day', capUsd: 5, spentUsd: 4.99, reservedUsd: 0.02 }),
    /spend cap of tenant acme, per day \(5\.00 USD\) would be exceeded/,
  );
});

test('one decision for every caller: unknown before the policy, the policy before approval, and why approval is needed', () => {
  const agentTools = new ToolRegistry([decl('a.own', true), decl('b.agent'), decl('c.pol'), decl('d.gone')]);
  const policy = effectivePolicy([{ allow: [], deny: ['d.*', 'z.*'], requireApproval: ['c.*'] }]);
  const governed = governRegistry(agentTools, policy, { agentTools: ['b.*'] });
  const g = { agentName: 'coder', agentTools, governed, policy, workerHas: (id: string) => id === 'w.other' };
  // A tool the agent does not have is unknown, whatever the policy says of it (no policy leak).
  assert.deepEqual(toolCallRefusal(g, 'z.denied'), {
    kind: 'unknown',
    text: 'unknown tool "z.denied". Available: a.own, b.agent, c.pol',
  });
  assert.match(toolCallRefusal(g, 'w.other')!.text, /^unknown tool "w\.other" \(agent coder does not have it\)/);
  assert.deepEqual(toolCallRefusal(g, 'd.gone'), {
    kind: 'policy',
    text: "tool d.gone is denied by the tenant's tool policy (d.*)",
  });
  for (const id of ['a.own', 'b.agent', 'c.pol']) assert.equal(toolCallRefusal(g, id), undefined);
  const why = (id: string) => approvalRefusal(id, governed.approvalFor(id, { n: 1 })!).text;
  assert.equal(
    why('a.own'),
    "a.own needs a person's approval (the tool's declaration); ask for it as a tool call, not from code",
  );
  assert.match(why('b.agent'), /\(the agent's approval\.tools\)/);
  assert.match(why('c.pol'), /\(the tenant's tool policy\)/);
});
