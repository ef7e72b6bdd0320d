import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createToolRegistry } from '../../../core/tools';
import { loadAgents } from '../../../activities/agents/loader';
import { createAgentViews } from '../../../activities/agents/view';

const DEFAULTS = {
  model: { provider: 'scripted' },
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
