/** Agents per tenant (core/agents/visibility.ts) and the `visibility` field of an agent file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentVisibleTo, visibleAgentNames } from '../../../core/agents/visibility';
import { AgentDefinitionSchema } from '../../../core/agents/definition';

const acmeWeb = { tenantId: 'acme', projectId: 'web' };
const globexApp = { tenantId: 'globex', projectId: 'app' };
const globexWeb = { tenantId: 'globex', projectId: 'web' };

test('no visibility: every tenant; tenants: all their projects; projects: that project only', () => {
  assert.equal(agentVisibleTo({}, acmeWeb), true);
  const def = { visibility: { tenants: ['acme'], projects: ['globex/web'] } };
  assert.equal(agentVisibleTo(def, acmeWeb), true);
  assert.equal(agentVisibleTo(def, { tenantId: 'acme', projectId: 'other' }), true);
  assert.equal(agentVisibleTo(def, globexWeb), true);
  assert.equal(agentVisibleTo(def, globexApp), false);
  assert.deepEqual(
    visibleAgentNames(
      [
        { name: 'a', definition: def },
        { name: 'b', definition: {} },
        { name: 'c', definition: { visibility: { tenants: ['initech'] } } },
      ],
      globexApp,
    ),
    ['b'],
  );
});

test('the schema: tenant ids and <tenant>/<project>, at least one of them, nothing else', () => {
  const parse = (visibility: unknown) => AgentDefinitionSchema.safeParse({ name: 'x', visibility });
  assert.equal(parse({ tenants: ['acme'] }).success, true);
  assert.equal(parse({ projects: ['acme/web'] }).success, true);
  const issue = (v: unknown) =>
    parse(v)
      .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('; ');
  assert.match(issue({})!, /visibility: visibility names no tenant and no project/);
  assert.match(issue({ projects: ['web'] })!, /visibility\.projects\.0: a project as <tenant>\/<project>/);
  assert.match(issue({ tenants: ['Acme Corp'] })!, /visibility\.tenants\.0: a tenant id/);
  assert.match(issue({ tenants: ['acme'], users: ['bob'] })!, /users/);
  assert.match(issue({ tenants: ['acme', 'acme'] })!, /listed twice/);
});
