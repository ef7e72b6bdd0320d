/** Declared abilities, the start-time ability check, prices keyed by provider and the pricing file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { abilitiesFor, abilityProblems, PROVIDER_IDS } from '../../../core/model/abilities';
import {
  costIfPriced,
  DEFAULT_PRICE_TABLE,
  estimateCost,
  parsePriceTable,
  priceFor,
} from '../../../core/model/pricing';
import { usageAttributes } from '../../../activities/telemetry/spans';
import { activePriceTable, loadPriceFile } from '../../../activities/model/pricing-file';
import { abilitiesOf, defaultProviderResolver, envDefaultModel } from '../../../activities/model/registry';
import { collectStream, ProviderError } from '../../../core/model/provider';
import { loadAgents } from '../../../activities/agents/loader';
import { oreply, startOpenAIEmulator } from '../../emulator/openai-emulator';

test('abilities: by provider and longest model prefix, the provider default for unknown models, overrides on top', () => {
  assert.deepEqual(PROVIDER_IDS, ['scripted', 'anthropic', 'openai']);
  assert.equal(abilitiesFor('anthropic', 'claude-sonnet-5-5').thinking, 'budget');
  assert.equal(abilitiesFor('openai', 'gpt-4o-mini-2024-07-18').jsonSchema, true);
  assert.equal(abilitiesFor('openai', 'gpt-4o-mini').caching, 'automatic');
  const local = abilitiesFor('openai', 'llama3.1:8b');
  assert.deepEqual([local.toolCalling, local.jsonSchema], [true, false]);
  assert.equal(abilitiesFor('openai', 'deepseek-reasoner').toolCalling, false);
  assert.equal(abilitiesFor('openai', 'llama3', { openai: { llama: { jsonSchema: true } } }).jsonSchema, true);
  assert.equal(abilitiesFor('nope', 'x').toolCalling, false);
  assert.equal(abilitiesOf({ provider: 'openai' }, { DREACT_OPENAI_MODEL: 'deepseek-chat' }).contextWindow, 64_000);
});

test('abilityProblems: a clear sentence for native on a model without tools, thinking without a budget, an unknown provider', () => {
  assert.deepEqual(abilityProblems('agent support', { provider: 'anthropic', protocol: 'native' }), []);
  assert.deepEqual(abilityProblems('agent x', { provider: 'openai', model: 'deepseek-reasoner', protocol: 'native' }), [
    'agent x asks for protocol native but openai model deepseek-reasoner (model) has no tool calling',
  ]);
  assert.deepEqual(
    abilityProblems('agent x', {
      provider: 'openai',
      model: 'gpt-4o',
      thinking: { budgetTokens: 2048 },
      protocol: 'native',
      fallbacks: [{ provider: 'openai', model: 'deepseek-reasoner' }, { provider: 'gemini' }],
    }),
    [
      'agent x asks for thinking with a budget but openai model gpt-4o has no budgeted extended thinking',
      'agent x asks for protocol native but openai model deepseek-reasoner (model.fallbacks[0]) has no tool calling',
      'agent x: model.fallbacks[1]: unknown provider "gemini" (known: scripted, anthropic, openai)',
    ],
  );
});

test('prices keyed by provider: openai entries qualified, anthropic unqualified and by family, unknown is clear', () => {
  assert.equal(priceFor('gpt-4o-mini', DEFAULT_PRICE_TABLE, 'openai').inputPerMTok, 0.15);
  assert.equal(priceFor('gpt-4o-2024-08-06', DEFAULT_PRICE_TABLE, 'openai').inputPerMTok, 2.5);
  assert.equal(priceFor('claude-sonnet-5-5', DEFAULT_PRICE_TABLE, 'anthropic').outputPerMTok, 15);
  assert.throws(
    () => priceFor('llama', DEFAULT_PRICE_TABLE, 'openai'),
    /no price for model "llama" of provider openai/,
  );
  assert.throws(() => priceFor('gpt-4o', DEFAULT_PRICE_TABLE, 'anthropic'), /no price/);
  // Cached input at the model's discount, no write surcharge.
  const c = estimateCost(
    { inputTokens: 1e6, outputTokens: 0, cacheReadTokens: 1e6, cacheWriteTokens: 0 },
    'gpt-4o',
    DEFAULT_PRICE_TABLE,
    'openai',
  );
  assert.deepEqual([c.input, c.cacheRead], [2.5, 1.25]);
});

test('pricing file: JSON or YAML entries over the defaults; a bad entry names the file and the field', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pricing-'));
  const yaml = path.join(dir, 'prices.yaml');
  writeFileSync(
    yaml,
    'openai:llama-3.3-70b: { inputPerMTok: 0.6, outputPerMTok: 0.6 }\nopenai:gpt-4o: { inputPerMTok: 9, outputPerMTok: 9 }\n',
  );
  const table = loadPriceFile(yaml);
  assert.equal(priceFor('llama-3.3-70b-instruct', table, 'openai').inputPerMTok, 0.6);
  assert.equal(priceFor('gpt-4o', table, 'openai').inputPerMTok, 9);
  assert.equal(priceFor('claude-haiku-4-5', table).inputPerMTok, 1, 'the defaults stay');
  const json = path.join(dir, 'prices.json');
  writeFileSync(json, JSON.stringify({ 'openai:m': { inputPerMTok: -1, outputPerMTok: 1 } }));
  assert.throws(() => loadPriceFile(json), /pricing file .*prices\.json: openai:m\.inputPerMTok/);
  assert.throws(() => parsePriceTable({ 'openai:m': { inputPerMTok: 1, outputPerMTok: 1, extra: 1 } }, 'x'), /extra/);
  assert.throws(() => loadPriceFile(path.join(dir, 'missing.json')), /cannot be read/);
  assert.equal(priceFor('llama-3.3-70b', activePriceTable({ DREACT_PRICING_FILE: yaml }), 'openai').outputPerMTok, 0.6);
  assert.equal(activePriceTable({}), DEFAULT_PRICE_TABLE);
  assert.throws(
    () => defaultProviderResolver({ DREACT_PRICING_FILE: json }),
    /pricing file/,
    'a bad file stops the start',
  );
});

test('registry: openai without credentials is a non-retryable auth error naming the variables; env default model', async () => {
  const p = defaultProviderResolver({})({ provider: 'openai' });
  await assert.rejects(
    collectStream(
      p.stream({ system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }], maxTokens: 5 }),
    ),
    (err: unknown) => err instanceof ProviderError && err.kind === 'auth' && /OPENAI_API_KEY/.test(err.message),
  );
  assert.equal(
    defaultProviderResolver({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' })({ provider: 'openai', model: 'm' }).id,
    'openai:m',
  );
  assert.deepEqual(envDefaultModel({ ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k' }), { provider: 'anthropic' });
  assert.deepEqual(envDefaultModel({ OPENAI_API_KEY: 'k' }), { provider: 'openai' });
  assert.equal(envDefaultModel({}), undefined);
  const chain = defaultProviderResolver({ ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k' })({
    provider: 'anthropic',
    model: 'claude-x',
    fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini' }],
  });
  assert.equal(chain.id, 'anthropic:claude-x');
});

test('the agent loader stops the start on a model that cannot do what the agent asks', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-abilities-'));
  writeFileSync(
    path.join(dir, 'reasoner.yaml'),
    'name: reasoner\nmodel: { provider: openai, model: deepseek-reasoner, protocol: native }\n',
  );
  writeFileSync(
    path.join(dir, 'fine.yaml'),
    'name: fine\nmodel:\n  provider: anthropic\n  protocol: native\n  thinking: { budget_tokens: 2048 }\n  fallbacks: [{ provider: openai, model: gpt-4o-mini }]\n',
  );
  await assert.rejects(loadAgents({ dir, toolIds: ['react.read'], env: {}, cwd: dir }), (err: Error) => {
    assert.match(
      err.message,
      /reasoner\.yaml: model: agent reasoner asks for protocol native but openai model deepseek-reasoner \(model\) has no tool calling \[invalid_value\]/,
    );
    assert.doesNotMatch(err.message, /fine\.yaml/);
    return true;
  });
});

test('registry: DREACT_OPENAI_HEADERS reach every request; a bad value stops the start', async () => {
  const emu = await startOpenAIEmulator();
  try {
    emu.enqueue(oreply.text('hi'));
    const resolve = defaultProviderResolver({
      OPENAI_BASE_URL: emu.baseURL,
      DREACT_OPENAI_HEADERS: '{"x-tenant":"acme"}',
      DREACT_OPENAI_STREAM_USAGE: 'off',
    });
    const res = await collectStream(
      resolve({ provider: 'openai', model: 'llama3' }).stream({
        system: [],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
        maxTokens: 5,
      }),
    );
    assert.equal(res.text, 'hi');
    assert.equal(emu.requests[0]!.headers['x-tenant'], 'acme');
    assert.equal(emu.requests[0]!.headers.authorization, 'Bearer none', 'a local server needs no key');
    assert.equal(emu.requests[0]!.body.stream_options, undefined);
  } finally {
    await emu.stop();
  }
  assert.throws(() => defaultProviderResolver({ DREACT_OPENAI_HEADERS: '[1]' }), /JSON object of string header/);
  assert.throws(() => defaultProviderResolver({ DREACT_OPENAI_HEADERS: '{' }), /DREACT_OPENAI_HEADERS/);
  assert.throws(() => defaultProviderResolver({ DREACT_OPENAI_STREAM_USAGE: 'maybe' }), /on" or "off/);
});

test('registry: a chain whose primary has no credentials moves on (auth); the fallback entry keeps its own settings', async () => {
  const emu = await startOpenAIEmulator();
  try {
    emu.enqueue(oreply.text('from the fallback'));
    const p = defaultProviderResolver({ OPENAI_BASE_URL: emu.baseURL })({
      provider: 'anthropic',
      model: 'claude-x',
      maxTokens: 1000,
      fallbacks: [{ provider: 'openai', model: 'local-model', maxTokens: 77, temperature: 0.5 }],
    });
    const res = await collectStream(
      p.stream({
        system: [],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
        maxTokens: 1000,
        model: 'claude-x',
      }),
    );
    assert.equal(res.text, 'from the fallback');
    assert.deepEqual(
      [emu.requests[0]!.body.model, emu.requests[0]!.body.max_tokens, emu.requests[0]!.body.temperature],
      ['local-model', 77, 0.5],
    );
  } finally {
    await emu.stop();
  }
});

test('span usage attributes: priced by provider; an unpriced model has no cost attribute (the call never fails for it)', () => {
  const u = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 };
  assert.ok((usageAttributes(u, 'gpt-4o-mini', 'openai')['dreact.cost_usd'] as number) > 0);
  assert.equal(usageAttributes(u, 'llama-local', 'openai')['dreact.cost_usd'], undefined);
  assert.equal(usageAttributes(u, 'claude-test')['dreact.cost_usd'], undefined);
  assert.equal(costIfPriced(u, 'gpt-4o-mini', DEFAULT_PRICE_TABLE, 'anthropic'), undefined);
});
