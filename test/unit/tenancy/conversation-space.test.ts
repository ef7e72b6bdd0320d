import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clientConversationId,
  ClientConversationIdSchema,
  conversationSpace,
  scopeConversationId,
} from '../../../core/tenancy/conversation-space';
import { LOCAL_PRINCIPAL, type Principal } from '../../../core/tenancy/principal';
import { ConversationIdSchema } from '../../../core/turn/contracts';

const key = (tenantId: string, projectId: string, userId: string | null = null): Principal => ({
  tenantId,
  projectId,
  userId,
  keyId: '0123456789ab',
  scopes: ['read', 'write'],
});

test('each tenant, project and user has its own space; the local tenant keeps plain ids', () => {
  assert.equal(conversationSpace(LOCAL_PRINCIPAL), '');
  assert.equal(conversationSpace(key('local', 'default')), '');
  assert.equal(conversationSpace(key('acme', 'web')), 'acme~web~');
  assert.equal(conversationSpace(key('acme', 'web', 'alice')), 'acme~web~alice~');
  assert.notEqual(scopeConversationId(key('acme', 'web'), 'x').id, scopeConversationId(key('globex', 'web'), 'x').id);
  assert.notEqual(scopeConversationId(key('acme', 'web'), 'x').id, scopeConversationId(key('acme', 'app'), 'x').id);
  assert.deepEqual(scopeConversationId(LOCAL_PRINCIPAL, 'x'), { id: 'x', mayCreate: true });
});

test('an id with ~ is relative to the caller and never creates; shown ids round-trip', () => {
  const project = key('acme', 'web');
  const alice = key('acme', 'web', 'alice');
  const stored = scopeConversationId(alice, 'c_1').id;
  assert.equal(stored, 'acme~web~alice~c_1');
  assert.equal(clientConversationId(alice, stored), 'c_1');
  // The project key sees alice's conversation as alice~c_1, and that name reaches it.
  const shown = clientConversationId(project, stored);
  assert.equal(shown, 'alice~c_1');
  assert.deepEqual(scopeConversationId(project, shown), { id: stored, mayCreate: false });
  // Another tenant naming the full id lands in its own space, not in acme's.
  assert.equal(scopeConversationId(key('globex', 'app'), stored).id, `globex~app~${stored}`);
  assert.equal(scopeConversationId(LOCAL_PRINCIPAL, stored).mayCreate, false);
  // A legacy (unscoped) id is shown as it is.
  assert.equal(clientConversationId(project, 'legacy_1'), 'legacy_1');
});

test('the longest scoped id is a valid conversation id', () => {
  const longest = key('t'.repeat(64), 'p'.repeat(64), 'u'.repeat(128));
  const id = 'i'.repeat(200);
  assert.ok(ClientConversationIdSchema.safeParse(id).success);
  assert.ok(ConversationIdSchema.safeParse(scopeConversationId(longest, id).id).success);
});
