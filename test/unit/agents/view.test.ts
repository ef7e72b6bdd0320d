import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createToolRegistry } from '../../../core/tools';
import { loadAgents } from '../../../activities/agents/loader';
import { createAgentViews } from '../../../activities/agents/view';

const DEFAULTS = {
  model: { provider: 'scripted' as const, maxTokens: 8192 },
  maxRounds: 15,
  contextMaxTokens: 80_000,
  multiAction: 'off' as const,
  cacheTtlSeconds: 300,
};

test('a view: instructions, the registry narrowed to the agent tools, settings; memoised by ref', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-views-'));
  writeFileSync(
    path.join(dir, 'support.yaml'),
    'name: support\ninstructions: Be kind.\ntools: { allow: [react.read, web_*] }\nlimits: { max_rounds: 5 }',
  );
  const registry = createToolRegistry();
  const catalogue = await loadAgents({ dir, toolIds: registry.ids(), env: {} });
  const views = createAgentViews(catalogue, registry, DEFAULTS);
  const support = catalogue.get('support');
  const v = views.view(support.ref);
  assert.equal(v.instructions, 'Be kind.');
  assert.deepEqual(v.registry.ids(), ['react.read', 'web_fetch', 'web_search']);
  assert.equal(v.settings.maxRounds, 5);
  assert.equal(v.settingsWith({ maxRounds: 3 }).maxRounds, 3);
  assert.equal(views.view({ ...support.ref }), v);
  const def = views.view(catalogue.get('default').ref);
  assert.equal(def.instructions, '');
  assert.deepEqual(def.registry.ids(), registry.ids(), 'the built-in agent: every tool, as before agents');
  assert.equal(def.settings.maxRounds, 15);
  assert.throws(() => views.view({ name: 'support', hash: 'f'.repeat(64) }), /is not loaded here/);
});

test('a view refuses an agent whose tools the worker registry lacks (module tools not registered)', async () => {
  const registry = createToolRegistry();
  const catalogue = await loadAgents({
    dir: mkdtempSync(path.join(os.tmpdir(), 'dreact-views-')),
    toolIds: [...registry.ids(), 'acme.x'],
    env: {},
  });
  const views = createAgentViews(catalogue, registry, DEFAULTS);
  assert.throws(() => views.view(catalogue.get('default').ref), /tools acme\.x are not in the worker's registry/);
});

test('forTurn: the view and settings of a TurnRef, memoised by agent version and overrides', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-views-'));
  writeFileSync(
    path.join(dir, 'capped.yaml'),
    'name: capped\ninstructions: x\nlimits: { max_rounds: 5, context_max_tokens: 60000 }',
  );
  const registry = createToolRegistry();
  const catalogue = await loadAgents({ dir, toolIds: registry.ids(), env: {} });
  const views = createAgentViews(catalogue, registry, DEFAULTS);
  const agent = catalogue.get('capped').ref;
  const at = { conversationId: 'c1', turnId: 'turn_1', turnIndex: 1, agent };
  const first = await views.forTurn({ ...at, overrides: { contextMaxTokens: 50_000, maxRounds: 9 } });
  assert.equal(first.view, views.view(agent));
  assert.equal(first.settings.contextMaxTokens, 50_000, 'the override under the agent ceiling');
  assert.equal(first.settings.maxRounds, 5, 'an override never raises the agent limit');
  // The same overrides (in another key order, another turn) resolve once: the same object.
  const again = await views.forTurn({
    ...at,
    turnId: 'turn_2',
    turnIndex: 2,
    overrides: { maxRounds: 9, contextMaxTokens: 50_000 },
  });
  assert.equal(again.settings, first.settings);
  // No overrides, or an empty model override: the agent's own settings object.
  assert.equal((await views.forTurn(at)).settings, first.view.settings);
  assert.equal((await views.forTurn({ ...at, overrides: { model: {} } })).settings, first.view.settings);
  // Other overrides: another resolution, with the model override on top and one output budget default.
  const model = await views.forTurn({ ...at, overrides: { model: { provider: 'anthropic', temperature: 0.3 } } });
  assert.notEqual(model.settings, first.settings);
  assert.deepEqual(model.settings.model, { provider: 'anthropic', temperature: 0.3, maxTokens: 8192 });
  assert.equal(model.settings.roles.compaction.temperature, 0.3, 'roles follow the override');
  // The old name of maxRounds is read (a conversation recorded before the rename).
  const old = await views.forTurn({ ...at, overrides: { maxIterations: 2 } as never });
  assert.equal(old.settings.maxRounds, 2);
  // No agent version (a turn recorded before agents): the default agent.
  assert.equal(
    (await views.forTurn({ conversationId: 'c1', turnId: 'turn_1', turnIndex: 1 })).view.ref.name,
    'default',
  );
  // A malformed ref names its field.
  await assert.rejects(views.forTurn({ ...at, turnIndex: 0 }), /turn\.turnIndex: /);
  await assert.rejects(
    views.forTurn({ ...at, overrides: { contextMaxTokens: 10 } }),
    /turn\.overrides\.contextMaxTokens: /,
  );
});
