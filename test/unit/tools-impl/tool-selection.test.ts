/** Tool selection: >12 tools → one structured call picks ≤6; every failure falls back to all tools. */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { BUILTIN_TOOLS, createToolRegistry, declareTool, type AnyToolDeclaration } from '../../../core/tools';
import { ProviderError, type ModelProvider } from '../../../core/model/provider';
import { createScriptedProvider } from '../../../activities/providers/scripted';
import { ScriptSpecSchema } from '../../../core/model/config';
import { createAnthropicProvider } from '../../../activities/providers/anthropic';
import { selectTools } from '../../../activities/turn/tool-selection';
import { CATALOGUE_LINE_CHARS, isPinnedTool, selectedToolIds, toolCatalogue } from '../../../core/tools/selection';
import { restrictRegistry } from '../../../core/tools/registry';
import { makeBlock } from '../../../core/timeline/block';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../../emulator/anthropic-emulator';

const TOPICS = [
  'weather',
  'stocks',
  'calendar',
  'email',
  'maps',
  'translate',
  'calculator',
  'news',
  'jira',
  'github',
  'slack',
  'drive',
  'crm',
  'invoices',
];

function fakeTool(topic: string): AnyToolDeclaration {
  return declareTool({
    id: `hub.${topic}`,
    description: `Query the ${topic} connector. Returns structured ${topic} data for the agent to use in its answer, with pagination and filters.`,
    params: z.strictObject({ q: z.string() }),
    strategy: 'exploration',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
    summarize: (p: { q: string }) => `hub.${topic} ${p.q}`,
  });
}

/** The built-ins + 14 connectors. */
const registry = createToolRegistry({ extra: TOPICS.map(fakeTool) });
const TOOL_COUNT = BUILTIN_TOOLS.length + TOPICS.length;
/** The runtime's own react.* tools: always offered, on top, in registry order. */
const REACT_IDS = registry.ids().filter(isPinnedTool);
const scripted = (answer: string): ModelProvider =>
  createScriptedProvider(ScriptSpecSchema.parse({ rounds: [answer], chunkSize: 64 }));

test('the registry under test has every built-in and connector and a compact catalogue (≤80 chars per tool, no schemas)', () => {
  assert.equal(registry.ids().length, TOOL_COUNT);
  const cat = toolCatalogue(registry);
  const lines = cat.split('\n');
  assert.equal(lines.length, TOOL_COUNT);
  for (const l of lines) assert.ok(l.length <= CATALOGUE_LINE_CHARS, l);
  assert.ok(!cat.includes('"type"'), 'no JSON schema in the catalogue');
  assert.match(
    lines.find((l) => l.startsWith('- hub.weather'))!,
    /^- hub\.weather: Query the weather connector\.$/,
  );
});

test('scripted model answering the structured call: picks are kept in registry order (level 2)', async () => {
  const sel = await selectTools(
    scripted('{"tools": ["hub.weather", "web_search", "hub.calendar"]}'),
    registry,
    'Will it rain at my 3pm meeting?',
  );
  assert.equal(sel.level, 2, 'the scripted model has no native tool calls: level 1 fails, JSON mode parses');
  assert.equal(sel.fallback, undefined);
  assert.deepEqual(sel.toolIds, [...REACT_IDS, 'web_search', 'hub.weather', 'hub.calendar']);
  assert.ok(sel.usage.inputTokens > 0);
});

test('at most 6 tools are kept; unknown names are ignored and reported; pinned tools come on top', async () => {
  const many = [
    'hub.news',
    'hub.jira',
    'nope',
    'hub.github',
    'hub.slack',
    'hub.drive',
    'hub.crm',
    'hub.invoices',
    'hub.maps',
  ];
  const sel = await selectTools(scripted(JSON.stringify({ tools: many })), registry, 'triage', {
    pinned: ['react.read', 'react.write'],
  });
  assert.deepEqual(sel.ignored, ['nope']);
  assert.deepEqual(sel.toolIds, [
    ...REACT_IDS,
    'hub.news',
    'hub.jira',
    'hub.github',
    'hub.slack',
    'hub.drive',
    'hub.crm',
  ]);
  await assert.rejects(
    selectTools(scripted('{}'), registry, 'x', { pinned: ['missing.tool'] }),
    /pinned tool "missing.tool" is not registered/,
  );
});

test('fallbacks: garbage, only unknown names, provider error → every tool, with the reason', async () => {
  const garbage = await selectTools(scripted('I would use the weather one.'), registry, 'weather?');
  assert.equal(garbage.fallback, 'structured_call_failed');
  assert.equal(garbage.toolIds.length, TOOL_COUNT);
  assert.match(garbage.reason!, /failed at every level/);

  const unknown = await selectTools(scripted('{"tools": ["teleport"]}'), registry, 'beam me up');
  assert.equal(unknown.fallback, 'no_valid_tools');
  assert.equal(unknown.toolIds.length, TOOL_COUNT);

  const failing: ModelProvider = {
    id: 'down',
    async *stream() {
      throw new ProviderError('overloaded', 'overloaded (529)');
    },
  };
  const down = await selectTools(failing, registry, 'anything');
  assert.equal(down.fallback, 'provider_error');
  assert.match(down.reason!, /overloaded/);
  assert.equal(down.toolIds.length, TOOL_COUNT);
});

test('cancellation is not swallowed', async () => {
  const ac = new AbortController();
  ac.abort();
  const slow = createScriptedProvider(ScriptSpecSchema.parse({ rounds: ['{"tools":[]}'], latencyMs: 50 }));
  await assert.rejects(selectTools(slow, registry, 'x', { signal: ac.signal }), /aborted/);
});

test('at or below the threshold nothing is called', async () => {
  const small = createToolRegistry();
  let calls = 0;
  const counting: ModelProvider = {
    id: 'count',
    async *stream() {
      calls++;
      throw new Error('must not be called');
    },
  };
  const sel = await selectTools(counting, small, 'hi');
  assert.equal(calls, 0);
  assert.equal(sel.fallback, 'below_threshold');
  assert.deepEqual(sel.toolIds, small.ids());
});

test('restrictRegistry and selectedToolIds', () => {
  const r = restrictRegistry(registry, ['hub.maps', 'react.read']);
  assert.deepEqual(r.ids(), ['react.read', 'hub.maps']);
  assert.throws(() => restrictRegistry(registry, ['nope']), /unknown tool "nope"/);
  const b = makeBlock({
    type: 'stage.tool_selection',
    author: 'system',
    turn_id: 'turn_1',
    ts: '2026-01-01T00:00:00Z',
    text: 'x',
    meta: { tool_ids: ['hub.maps'] },
  });
  assert.deepEqual(selectedToolIds([b], 'turn_1'), ['hub.maps']);
  assert.equal(selectedToolIds([b], 'turn_2'), undefined);
});

let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator();
});
after(async () => emu.stop());
beforeEach(() => emu.reset());

test('Anthropic emulator: native tool forcing picks at level 1 from the catalogue', async () => {
  emu.respond(() => reply.toolUse('select_tools', { tools: ['hub.stocks', 'hub.news'] }));
  const provider = createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'k', model: 'claude-test' });
  const sel = await selectTools(provider, registry, 'How did ACME stock react to the news?');
  assert.equal(sel.level, 1);
  assert.deepEqual(sel.toolIds, [...REACT_IDS, 'hub.stocks', 'hub.news']);
  assert.equal(emu.requests.length, 1);
  const body = emu.requests[0]!.body as {
    tool_choice: unknown;
    messages: Array<{ content: Array<{ text?: string }> }>;
  };
  assert.deepEqual(body.tool_choice, { type: 'tool', name: 'select_tools' });
  const sent = JSON.stringify(body.messages);
  assert.ok(sent.includes('hub.invoices'), 'the catalogue lists the tools');
  assert.ok(!sent.includes('"properties"'), 'but not their schemas');
});
