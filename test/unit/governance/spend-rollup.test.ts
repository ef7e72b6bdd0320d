import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childLink } from '../../../core/governance/spend-rollup';
import { delegationCap, mayDelegate, subagentConversationId } from '../../../core/agents/subagents';

test("a child's link names the root and carries every capped turn above it, root first", () => {
  const root = childLink({ conversationId: 'c', turnId: 'turn_3', link: undefined, turnCapUsd: 0.5, maxDepth: 3 });
  assert.deepEqual(root, {
    parentConversationId: 'c',
    parentTurnId: 'turn_3',
    rootConversationId: 'c',
    rootTurnId: 'turn_3',
    turnCaps: [{ conversationId: 'c', turnId: 'turn_3', capUsd: 0.5 }],
    depthCap: 3,
  });
  const mid = subagentConversationId('c', 'tc_a');
  // The middle agent has no cap of its own and a larger max_depth: the root's still hold.
  const below = childLink({ conversationId: mid, turnId: 'turn_1', link: root, turnCapUsd: undefined, maxDepth: 5 });
  assert.equal(below.rootConversationId, 'c');
  assert.equal(below.rootTurnId, 'turn_3');
  assert.deepEqual(below.turnCaps, root.turnCaps);
  assert.equal(below.depthCap, 3, "a subagent's max_depth cannot lift the root's");
  const capped = childLink({ conversationId: mid, turnId: 'turn_1', link: root, turnCapUsd: 0.1, maxDepth: 1 });
  assert.deepEqual(
    capped.turnCaps.map((t) => t.conversationId),
    ['c', mid],
  );
  assert.equal(capped.depthCap, 2, 'max_depth counts levels below the agent (depth 1 + 1)');
});

test("the depth cap: a user's conversation reads its own agent's max_depth, a subagent's the inherited one", () => {
  const middle = { name: 'middle', subagents: ['bottom'], max_depth: 3 };
  assert.equal(mayDelegate(middle, 0), true);
  assert.equal(mayDelegate(middle, 1), true, 'its own max_depth alone would let it');
  const inherited = childLink({
    conversationId: 'c',
    turnId: 'turn_1',
    link: undefined,
    turnCapUsd: undefined,
    maxDepth: undefined,
  }).depthCap;
  assert.equal(inherited, 1, 'the default max_depth of the agent above');
  assert.equal(mayDelegate(middle, 1, inherited), false, "the delegating agent's max_depth 1 holds");
  assert.equal(delegationCap({ max_depth: 4 }, 2), 2);
  assert.equal(delegationCap({}, undefined), 1);
  assert.equal(delegationCap({ max_depth: 9 }), 5, 'never below MAX_DELEGATION_DEPTH');
});
