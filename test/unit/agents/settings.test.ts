import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  layerModel,
  modelSettingsOf,
  resolveTurnSettings,
  type AgentSettingsSource,
  type ModelSettings,
  type WorkerDefaults,
} from '../../../core/agents/settings';
import { ROLE_PURPOSES } from '../../../core/agents/ref';

const WORKER: WorkerDefaults = {
  model: { provider: 'scripted', script: 'echo', maxTokens: 8192 },
  maxRounds: 15,
  contextMaxTokens: 80_000,
  multiAction: 'off',
  cacheTtlSeconds: 300,
  toolIds: ['react.read', 'react.write', 'web_fetch', 'web_search', 'acme.weather'],
};

test('no agent and no overrides: the worker defaults, every tool, every role on the main model', () => {
  const s = resolveTurnSettings(WORKER, undefined);
  assert.deepEqual(s.model, { provider: 'scripted', script: 'echo', maxTokens: 8192 });
  for (const p of ROLE_PURPOSES) assert.deepEqual(s.roles[p], s.model, p);
  assert.equal(s.maxRounds, 15);
  assert.equal(s.contextMaxTokens, 80_000);
  assert.equal(s.multiAction, 'off');
  assert.equal(s.cacheTtlSeconds, 300);
  assert.deepEqual(s.tools, WORKER.toolIds);
  assert.notEqual(s.tools, WORKER.toolIds, 'a copy, not the worker list');
});

test('the built-in agent (no settings) resolves exactly like no agent', () => {
  assert.deepEqual(resolveTurnSettings(WORKER, {}), resolveTurnSettings(WORKER, undefined));
});

const AGENT: AgentSettingsSource = {
  model: { provider: 'anthropic', model: 'claude-sonnet-4-5', max_tokens: 4000, protocol: 'native' },
  roles: { title: { model: 'claude-haiku-4-5', max_tokens: 200 }, judge: { provider: 'scripted', script: 'judge' } },
  limits: { max_rounds: 8, context_max_tokens: 120_000, cache_ttl_seconds: 3600 },
  multi_action: 'safe_fanout',
  tools: { allow: ['react.*', 'web_*', '!web_search'] },
};

test('the agent layers over the worker; a changed provider drops the worker model and script', () => {
  const s = resolveTurnSettings(WORKER, AGENT);
  assert.deepEqual(s.model, { provider: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 4000, protocol: 'native' });
  assert.equal(s.maxRounds, 8);
  assert.equal(s.contextMaxTokens, 120_000);
  assert.equal(s.cacheTtlSeconds, 3600);
  assert.equal(s.multiAction, 'safe_fanout');
  assert.deepEqual(s.tools, ['react.read', 'react.write', 'web_fetch']);
});

test('roles start from the main model; a role on another provider keeps only its own model fields', () => {
  const s = resolveTurnSettings(WORKER, AGENT);
  assert.deepEqual(s.roles.title, {
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    maxTokens: 200,
    protocol: 'native',
  });
  assert.deepEqual(s.roles.judge, { provider: 'scripted', script: 'judge', maxTokens: 4000, protocol: 'native' });
  assert.deepEqual(s.roles.compaction, s.model);
  assert.deepEqual(s.roles.synthesis, s.model);
  assert.deepEqual(s.roles.tool_selection, s.model);
});

test('overrides are most significant, but never raise the agent limits', () => {
  const lower = resolveTurnSettings(WORKER, AGENT, { maxRounds: 3, contextMaxTokens: 50_000 });
  assert.equal(lower.maxRounds, 3);
  assert.equal(lower.contextMaxTokens, 50_000);
  const higher = resolveTurnSettings(WORKER, AGENT, { maxRounds: 50, contextMaxTokens: 2_000_000 });
  assert.equal(higher.maxRounds, 8);
  assert.equal(higher.contextMaxTokens, 120_000);
  const noLimits = resolveTurnSettings(WORKER, undefined, { maxRounds: 50, contextMaxTokens: 200_000 });
  assert.equal(noLimits.maxRounds, 50, 'without agent limits, the override wins over the worker default');
  assert.equal(noLimits.contextMaxTokens, 200_000);
});

test('a model override: same provider merges, another provider replaces model and script; roles follow', () => {
  const same = resolveTurnSettings(WORKER, AGENT, { model: { temperature: 0.2 } });
  assert.deepEqual(same.model, {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    maxTokens: 4000,
    protocol: 'native',
    temperature: 0.2,
  });
  assert.equal(same.roles.compaction.temperature, 0.2);
  const other = resolveTurnSettings(WORKER, undefined, { model: { provider: 'anthropic' } });
  assert.deepEqual(
    other.model,
    { provider: 'anthropic', maxTokens: 8192 },
    "the output budget stays: it is no provider's",
  );
  const script = resolveTurnSettings(WORKER, undefined, { model: { provider: 'scripted', script: 'tools' } });
  assert.deepEqual(script.model, { provider: 'scripted', script: 'tools', maxTokens: 8192 });
});

test('undefined fields in any layer never hide a lower value', () => {
  const s = resolveTurnSettings(
    WORKER,
    { model: { provider: 'scripted', model: undefined }, limits: { max_rounds: undefined } },
    { model: { provider: undefined, script: undefined }, maxRounds: undefined, multiAction: undefined },
  );
  assert.deepEqual(s.model, { provider: 'scripted', script: 'echo', maxTokens: 8192 });
  assert.equal(s.maxRounds, 15);
  assert.equal(s.multiAction, 'off');
});

test('role overrides and tool overrides (which only narrow)', () => {
  const s = resolveTurnSettings(WORKER, AGENT, {
    roles: { title: { model: 'claude-haiku-4-5-fast' } },
    tools: ['web_*', 'web_search', 'acme.weather'],
  });
  assert.equal(s.roles.title.model, 'claude-haiku-4-5-fast');
  assert.deepEqual(s.tools, ['web_fetch'], 'web_search and acme.weather are outside the agent allow-list');
});

test('modelSettingsOf maps the file fields and drops absent ones', () => {
  assert.equal(modelSettingsOf(undefined), undefined);
  assert.deepEqual(modelSettingsOf({ provider: 'anthropic', answer_synthesis: true, temperature: 0 }), {
    provider: 'anthropic',
    answerSynthesis: true,
    temperature: 0,
  });
});

test('modelSettingsOf carries extended thinking and the fallback chain of an agent file', () => {
  assert.deepEqual(
    modelSettingsOf({
      provider: 'anthropic',
      thinking: { budget_tokens: 2048 },
      fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini', max_tokens: 4000 }, { provider: 'scripted' }],
    }),
    {
      provider: 'anthropic',
      thinking: { budgetTokens: 2048 },
      fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini', maxTokens: 4000 }, { provider: 'scripted' }],
    },
  );
});

const provider = fc.constantFrom('scripted', 'anthropic', 'openai');
const model: fc.Arbitrary<Partial<ModelSettings>> = fc.record(
  {
    provider,
    model: fc.constantFrom('m1', 'm2'),
    maxTokens: fc.integer({ min: 1, max: 64_000 }),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    protocol: fc.constantFrom('channels' as const, 'native' as const),
    script: fc.constantFrom('echo', 'tools'),
  },
  { requiredKeys: [] },
);

test('property: layering keeps every defined upper field, and an empty upper layer changes nothing', () => {
  fc.assert(
    fc.property(model, model, (lowerPart, upper) => {
      const lower: ModelSettings = { provider: 'scripted', ...lowerPart };
      const out = layerModel(lower, upper);
      for (const [k, v] of Object.entries(upper)) assert.deepEqual(out[k as keyof ModelSettings], v, k);
      assert.deepEqual(layerModel(lower, {}), lower);
      assert.deepEqual(layerModel(lower, undefined), lower);
      if (out.provider === lower.provider) {
        for (const [k, v] of Object.entries(lower))
          if (!(k in upper)) assert.deepEqual(out[k as keyof ModelSettings], v);
      } else {
        if (!('model' in upper)) assert.equal(out.model, undefined);
        if (!('script' in upper)) assert.equal(out.script, undefined);
      }
      assert.ok(Object.values(out).every((v) => v !== undefined));
    }),
  );
});

test('property: limits — the result is the agent limit or below, and the override when it is lower', () => {
  const opt = (min: number, max: number) => fc.option(fc.integer({ min, max }), { nil: undefined });
  fc.assert(
    fc.property(opt(1, 100), opt(1, 100), fc.integer({ min: 1, max: 100 }), (agentMax, override, worker) => {
      const s = resolveTurnSettings(
        { ...WORKER, maxRounds: worker },
        { limits: { max_rounds: agentMax } },
        { maxRounds: override },
      );
      if (agentMax !== undefined) assert.ok(s.maxRounds <= agentMax);
      if (override !== undefined) assert.ok(s.maxRounds <= override);
      const expected = override ?? agentMax ?? worker;
      assert.equal(s.maxRounds, agentMax !== undefined ? Math.min(agentMax, expected) : expected);
    }),
  );
});
