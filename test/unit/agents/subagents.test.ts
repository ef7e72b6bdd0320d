import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { createToolRegistry } from '../../../core/tools';
import { agentDelegate } from '../../../core/tools/agent-tools';
import { loadAgents } from '../../../activities/agents/loader';
import { createAgentViews } from '../../../activities/agents/view';
import {
  DELEGATE_TOOL_ID,
  delegationDepth,
  delegationRefusal,
  mayDelegate,
  parentConversationOf,
  subagentConversationId,
  subagentSummary,
  subagentWorkflowId,
} from '../../../core/agents/subagents';
import { ConversationIdSchema } from '../../../core/turn/contracts';

test('child ids follow from the call: a valid conversation id, its depth and parent, an addressable workflow id', () => {
  const child = subagentConversationId('conv_1', 'tc_0123456789ab');
  assert.equal(child, 'conv_1:sub:tc_0123456789ab');
  assert.ok(ConversationIdSchema.safeParse(child).success);
  assert.equal(subagentWorkflowId('conv_1', 'tc_0123456789ab'), 'conv/conv_1/sub/tc_0123456789ab');
  assert.equal(delegationDepth('conv_1'), 0);
  assert.equal(delegationDepth(child), 1);
  const grandchild = subagentConversationId(child, 'tc_ffffffffffff');
  assert.equal(delegationDepth(grandchild), 2);
  assert.equal(parentConversationOf(grandchild), child);
  assert.equal(parentConversationOf('conv_1'), undefined);
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,20}$/), fc.integer({ min: 1, max: 4 }), (root, n) => {
      let id = root;
      for (let i = 0; i < n; i++) id = subagentConversationId(id, `tc_${String(i).padStart(12, '0')}`);
      return delegationDepth(id) === n;
    }),
  );
});

test('who may delegate: listed subagents, under max_depth (default 1); refusals name the reason', () => {
  const lead = { name: 'lead', subagents: ['researcher'] };
  assert.equal(mayDelegate(lead, 0), true);
  assert.equal(mayDelegate(lead, 1), false, 'default max_depth 1');
  assert.equal(mayDelegate({ ...lead, max_depth: 2 }, 1), true);
  assert.equal(mayDelegate({ name: 'solo' }, 0), false);
  assert.equal(delegationRefusal(lead, 0, 'researcher'), undefined);
  assert.match(delegationRefusal(lead, 0, 'outsider')!, /may not delegate to "outsider" \(its subagents: researcher\)/);
  assert.match(delegationRefusal(lead, 1, 'researcher')!, /depth cap/);
  assert.match(delegationRefusal({ name: 'solo' }, 0, 'x')!, /has no subagents/);
  assert.equal(subagentSummary('researcher', 'find  the\ncapital'), 'subagent researcher: find the capital');
});

test('agent.delegate is offered only to an agent with subagents, above its depth cap', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-subviews-'));
  writeFileSync(
    path.join(dir, 'lead.yaml'),
    'name: lead\ninstructions: x\ntools: { allow: [react.read] }\nsubagents: [helper]\n',
  );
  writeFileSync(path.join(dir, 'deep.yaml'), 'name: deep\ninstructions: x\nsubagents: [helper]\nmax_depth: 2\n');
  writeFileSync(path.join(dir, 'helper.yaml'), 'name: helper\ninstructions: x\n');
  const registry = createToolRegistry({ extra: [agentDelegate] });
  const catalogue = await loadAgents({ dir, toolIds: createToolRegistry().ids(), env: {} });
  const views = createAgentViews(catalogue, registry, {
    model: { provider: 'scripted', maxTokens: 8192 },
    maxRounds: 15,
    contextMaxTokens: 80_000,
    multiAction: 'off',
    cacheTtlSeconds: 300,
  });
  const lead = catalogue.get('lead').ref;
  assert.deepEqual(views.view(lead).registry.ids(), ['react.read', DELEGATE_TOOL_ID], 'whatever the allow-list');
  assert.ok(!views.view({ ...lead, depth: 1 }).registry.has(DELEGATE_TOOL_ID), 'not at the cap');
  assert.equal(views.view({ ...lead, depth: 1 }).ref.depth, 1);
  assert.ok(views.view({ ...catalogue.get('deep').ref, depth: 1 }).registry.has(DELEGATE_TOOL_ID));
  assert.ok(!views.view(catalogue.get('helper').ref).registry.has(DELEGATE_TOOL_ID), 'no subagents');
  assert.ok(!views.view(catalogue.get('default').ref).registry.has(DELEGATE_TOOL_ID));
});
