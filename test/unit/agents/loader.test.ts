import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { loadAgents } from '../../../activities/agents/loader';
import { type LoadAgentsOptions } from '../../../activities/agents/load-options';
import { AgentDefinitionError, type AgentIssue } from '../../../activities/agents/errors';
import { DEFAULT_AGENT_DEFINITION } from '../../../activities/agents/default-agent';
import { canonicalJson } from '../../../activities/agents/hash';

const TOOL_IDS = ['react.read', 'react.write', 'react.plan', 'web_fetch', 'web_search'];
const SDK = path.resolve(__dirname, '../../../workers/sdk/tools.ts');
const ZOD = require.resolve('zod');

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-agents-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const load = (dir: string, opts: Partial<LoadAgentsOptions> = {}) =>
  loadAgents({ dir, toolIds: TOOL_IDS, env: {}, cwd: dir, ...opts });

async function problems(dir: string, opts: Partial<LoadAgentsOptions> = {}): Promise<AgentIssue[]> {
  try {
    await load(dir, opts);
  } catch (err) {
    assert.ok(err instanceof AgentDefinitionError, String(err));
    return [...err.issues];
  }
  assert.fail('expected an AgentDefinitionError');
}

const one = async (files: Record<string, string>, opts: Partial<LoadAgentsOptions> = {}) => {
  const found = await problems(folder(files), opts);
  assert.equal(found.length, 1, JSON.stringify(found));
  return found[0]!;
};

test('loads YAML and JSON agents, the instructions file inline, plus the built-in default', async () => {
  const dir = folder({
    'support.yaml': [
      '# yaml-language-server: $schema=../docs/agent.schema.json',
      'name: support',
      'description: Answers support questions.',
      'instructions_file: prompts/support.md',
      'model: { provider: anthropic, model: claude-sonnet-4-5 }',
      'tools: { allow: [react.*, web_fetch] }',
      'limits: { max_rounds: 8 }',
    ].join('\n'),
    'prompts/support.md': 'You answer support questions.\n',
    'researcher.json': JSON.stringify({ name: 'researcher', instructions: 'Research.', subagents: ['support'] }),
    'README.md': '# not an agent',
    'nested/other.yaml': 'name: other',
  });
  const cat = await load(dir);
  assert.deepEqual(cat.names(), ['default', 'researcher', 'support']);
  const support = cat.get('support');
  assert.equal(support.definition.instructions, 'You answer support questions.\n');
  assert.equal('instructions_file' in support.definition, false);
  assert.deepEqual(support.toolIds, ['react.read', 'react.write', 'react.plan', 'web_fetch']);
  assert.deepEqual(support.offeredToolIds, TOOL_IDS);
  assert.equal(support.file, path.join(dir, 'support.yaml'));
  assert.match(support.ref.hash, /^[0-9a-f]{32}$/);
  assert.deepEqual(cat.get('researcher').toolIds, TOOL_IDS, 'no allow-list: every tool');
  assert.deepEqual(cat.get('default').definition, DEFAULT_AGENT_DEFINITION);
  assert.equal(cat.get('default').file, undefined);
});

test('the hash is the content: same definition same hash, any change (instructions too) another', async () => {
  const a = await load(folder({ 'a.yaml': 'name: a\ninstructions_file: a.md', 'a.md': 'Be brief.' }));
  const b = await load(folder({ 'a.yaml': 'name: a\ninstructions: Be brief.' }));
  const c = await load(folder({ 'a.yaml': 'name: a\ninstructions_file: a.md', 'a.md': 'Be briefer.' }));
  const d = await load(folder({ 'a.json': '{"limits": {"max_rounds": 3}, "name": "a", "instructions": "Be brief."}' }));
  const e = await load(folder({ 'a.yaml': 'name: a\ninstructions: Be brief.\nlimits:\n  max_rounds: 3' }));
  assert.equal(a.get('a').ref.hash, b.get('a').ref.hash, 'inline or from a file: the same resolved definition');
  assert.notEqual(a.get('a').ref.hash, c.get('a').ref.hash);
  assert.equal(d.get('a').ref.hash, e.get('a').ref.hash, 'key order and format do not matter');
  assert.notEqual(b.get('a').ref.hash, e.get('a').ref.hash);
  assert.equal(
    canonicalJson({ b: 1, a: { d: undefined, c: [2, { z: 1, y: 2 }] } }),
    '{"a":{"c":[2,{"y":2,"z":1}]},"b":1}',
  );
});

test('each rule is reported with the file, the field and the rule', async () => {
  const cases: Array<[Record<string, string>, string, string, RegExp]> = [
    [{ 'a.yaml': 'name: a\nmax_iterations: 4' }, 'max_iterations', 'unknown_field', /did you mean max_rounds/],
    [{ 'a.yaml': 'name: a\ntools: { allow: ["web_**"] }' }, 'tools.allow[0]', 'bad_glob', /write \* once/],
    [
      { 'a.yaml': 'name: a\ntools: { allow: [web_serch] }' },
      'tools.allow[0]',
      'unknown_tool',
      /unknown tool id "web_serch"/,
    ],
    [{ 'a.yaml': 'name: a\ntools: { allow: ["mcp.github.*"] }' }, 'tools.allow[0]', 'unknown_tool', /matches no tool/],
    [
      { 'a.yaml': 'name: a\ninstructions_file: gone.md' },
      'instructions_file',
      'missing_file',
      /gone\.md cannot be read/,
    ],
    [
      { 'a.yaml': 'name: a\nlimits: { context_max_tokens: 10 }' },
      'limits.context_max_tokens',
      'bad_limit',
      /1000 to 2000000/,
    ],
    [{ 'a.yaml': 'name: b' }, 'name', 'name_mismatch', /differs from the file name "a"/],
    [{ 'a.yaml': 'name: a\nsubagents: [ghost]' }, 'subagents[0]', 'unknown_subagent', /no agent named "ghost"/],
    [
      { 'a.yaml': 'name: a\nmodel: { provider: gemini }' },
      'model.provider',
      'unknown_provider',
      /scripted, anthropic, openai/,
    ],
    [{ 'a.yaml': 'name: a\nroles: { title: { provider: x } }' }, 'roles.title.provider', 'unknown_provider', /"x"/],
    [{ 'a.yaml': 'name: a\nsecrets: { K: { env: NOPE } }' }, 'secrets.K', 'missing_secret', /NOPE is not set/],
    [{ 'a.yaml': 'name: a\nskills: ./skills' }, 'skills', 'missing_file', /is not a folder/],
    [{ 'a.yaml': 'name: a\n  bad: [' }, '(file)', 'parse_error', /invalid YAML/],
    [{ 'a.yaml': 'name: a\nname: a' }, '(file)', 'parse_error', /invalid YAML/],
    [{ 'a.yaml': 'name: a\ntools: { allow: ["*", !web_search] }' }, '(file)', 'parse_error', /quote a tool pattern/],
    [{ 'a.json': '{"name": "a",}' }, '(file)', 'parse_error', /invalid JSON/],
    [{ 'a.yaml': '- name: a' }, '(file)', 'invalid_value', /one object/],
    [{ 'a.yaml': 'name: a\ntools: { modules: [./missing.ts] }' }, 'tools.modules[0]', 'missing_file', /not found/],
  ];
  for (const [files, field, rule, message] of cases) {
    const issue = await one(files);
    const file = Object.keys(files)[0]!;
    assert.deepEqual([issue.file, issue.field, issue.rule], [file, field, rule], JSON.stringify(issue));
    assert.match(issue.message, message, JSON.stringify(issue));
  }
});

test('duplicate names and delegation cycles', async () => {
  const dup = await one({ 'a.yaml': 'name: a', 'a.json': '{"name":"a"}' });
  assert.deepEqual([dup.file, dup.field, dup.rule], ['a.yaml', 'name', 'duplicate_name']);
  assert.match(dup.message, /also defined in a\.json/);
  const cycle = await problems(
    folder({
      'a.yaml': 'name: a\nsubagents: [b]',
      'b.yaml': 'name: b\nsubagents: [c]',
      'c.yaml': 'name: c\nsubagents: [a]',
    }),
  );
  assert.deepEqual(
    cycle.map((i) => [i.file, i.rule, i.message]),
    [
      ['a.yaml', 'subagent_cycle', 'delegation cycle a → b → c → a (an agent may not reach itself)'],
      ['b.yaml', 'subagent_cycle', 'delegation cycle b → c → a → b (an agent may not reach itself)'],
      ['c.yaml', 'subagent_cycle', 'delegation cycle c → a → b → c (an agent may not reach itself)'],
    ],
  );
  const self = await one({ 'a.yaml': 'name: a\nsubagents: [a]' });
  assert.equal(self.rule, 'subagent_cycle');
  const dag = await load(
    folder({ 'a.yaml': 'name: a\nsubagents: [b, c]', 'b.yaml': 'name: b\nsubagents: [c]', 'c.yaml': 'name: c' }),
  );
  assert.deepEqual(dag.names(), ['a', 'b', 'c', 'default'], 'a diamond is no cycle');
});

test('all problems of a load in one error, one line each: file: field: message [rule]', async () => {
  const dir = folder({
    'a.yaml': 'name: a\nlimits: { max_rounds: 0 }\nfoo: 1',
    'b.yaml': 'name: b\ntools: { allow: [nope] }',
  });
  await assert.rejects(load(dir), (err: Error) => {
    assert.equal(err.name, 'AgentDefinitionError');
    const lines = err.message.split('\n');
    assert.equal(lines[0], 'agent definitions: 3 problems');
    assert.ok(lines.includes('  a.yaml: limits.max_rounds: must be an integer from 1 to 100 [bad_limit]'), err.message);
    assert.ok(lines.includes('  a.yaml: foo: unknown field "foo" [unknown_field]'), err.message);
    assert.ok(lines.some((l) => l.startsWith('  b.yaml: tools.allow[0]: unknown tool id "nope" (tools: react.read')));
    return true;
  });
  await assert.rejects(
    load(folder({ 'a.yaml': 'name: b' })),
    /^AgentDefinitionError: agent definition: a\.yaml: name: /,
  );
});

test('folders: a named folder must exist, the default one may not; files by path; a file named default', async () => {
  const missing = path.join(os.tmpdir(), 'dreact-no-such-agents-dir');
  await assert.rejects(
    loadAgents({ toolIds: TOOL_IDS, env: { DREACT_AGENTS_DIR: missing } }),
    /agents folder cannot be read/,
  );
  const empty = folder({});
  const none = await loadAgents({ toolIds: TOOL_IDS, env: {}, cwd: empty });
  assert.deepEqual(none.names(), ['default'], 'no ./agents folder: the built-in agent only');
  const viaEnv = await loadAgents({ toolIds: TOOL_IDS, env: { DREACT_AGENTS_DIR: folder({ 'x.yaml': 'name: x' }) } });
  assert.deepEqual(viaEnv.names(), ['default', 'x']);
  const other = folder({ 'solo.yml': 'name: solo\ninstructions: Alone.' });
  const byPath = await loadAgents({ toolIds: TOOL_IDS, env: {}, cwd: empty, files: [path.join(other, 'solo.yml')] });
  assert.equal(byPath.get('solo').definition.instructions, 'Alone.');
  const own = await load(folder({ 'default.yaml': 'name: default\ninstructions: House rules.' }));
  assert.equal(own.get('default').definition.instructions, 'House rules.');
  assert.ok(own.get('default').file);
});

test('secrets resolve from the environment and files; they print as names only', async () => {
  const dir = folder({
    'a.yaml': 'name: a\nsecrets:\n  TOKEN: { env: ACME_TOKEN }\n  DB: { file: ./db.secret }',
    'db.secret': 'hunter2\n',
  });
  const a = (await load(dir, { env: { ACME_TOKEN: 's3cr3t' } })).get('a');
  assert.equal(a.secrets.get('TOKEN'), 's3cr3t');
  assert.equal(a.secrets.get('DB'), 'hunter2');
  assert.throws(() => a.secrets.get('OTHER'), /secret "OTHER" is not declared by this agent \(declared: DB, TOKEN\)/);
  for (const shown of [JSON.stringify(a), inspect(a, { depth: 5 }), `${a.secrets}`]) {
    assert.doesNotMatch(shown, /s3cr3t|hunter2/);
  }
  assert.match(JSON.stringify(a), /\[secrets: DB, TOKEN\]/);
  assert.equal(JSON.stringify(a.definition.secrets), '{"TOKEN":{"env":"ACME_TOKEN"},"DB":{"file":"./db.secret"}}');
  const missing = await one({ 'a.yaml': 'name: a\nsecrets: { DB: { file: ./none } }' });
  assert.equal(missing.rule, 'missing_secret');
});

const MODULE = (ids: string[]) =>
  [
    `const { z } = require(${JSON.stringify(ZOD)});`,
    `const { defineTool } = require(${JSON.stringify(SDK)});`,
    ...ids.map(
      (id, i) =>
        `exports.t${i} = defineTool({ id: ${JSON.stringify(id)}, description: 'Test tool ${id}.', params: z.object({}), run: async () => 'ok' });`,
    ),
  ].join('\n');

test('tool modules: loaded once, their tools offered to the agents that name them only', async () => {
  const dir = folder({
    'tools/acme.ts': MODULE(['acme.weather', 'acme.stock']),
    'a.yaml': 'name: a\ntools: { modules: [./tools/acme.ts], allow: [react.read, acme.*] }',
    'b.yaml': 'name: b\ntools: { modules: [./tools/acme.ts] }',
    'c.yaml': 'name: c',
  });
  const imported: string[] = [];
  const cat = await load(dir, {
    importModule: async (file) => {
      imported.push(file);
      return import(file);
    },
  });
  assert.equal(imported.length, 1, 'one import for two agents');
  assert.deepEqual(cat.get('a').toolIds, ['react.read', 'acme.weather', 'acme.stock']);
  assert.deepEqual(
    cat.get('b').toolIds,
    [...TOOL_IDS, 'acme.weather', 'acme.stock'],
    'default: worker and own module tools',
  );
  assert.deepEqual(cat.get('c').toolIds, TOOL_IDS, 'another agent does not get them');
  assert.deepEqual(
    cat.moduleTools.map((t) => t.declaration.id),
    ['acme.weather', 'acme.stock'],
  );
  const c2 = await one({
    'c.yaml': 'name: c\ntools: { allow: [acme.weather] }',
    'tools/acme.ts': MODULE(['acme.weather']),
  });
  assert.equal(c2.rule, 'unknown_tool', 'a tool of a module the agent does not name is unknown to it');
});

test('tool module problems: no tools, a clash with the worker or another module, a failing import', async () => {
  const empty = await one({ 'a.yaml': 'name: a\ntools: { modules: [./t.ts] }', 't.ts': 'exports.x = 1;' });
  assert.deepEqual([empty.field, empty.rule], ['tools.modules[0]', 'bad_module']);
  assert.match(empty.message, /exports no tools/);
  const clash = await one({ 'a.yaml': 'name: a\ntools: { modules: [./t.ts] }', 't.ts': MODULE(['web_fetch']) });
  assert.equal(clash.rule, 'duplicate_tool');
  assert.match(clash.message, /defines web_fetch, a tool this worker already has/);
  const twice = await problems(
    folder({
      'a.yaml': 'name: a\ntools: { modules: [./t1.ts, ./t2.ts] }',
      't1.ts': MODULE(['acme.x']),
      't2.ts': MODULE(['acme.x']),
    }),
  );
  assert.deepEqual(
    twice.map((i) => [i.field, i.rule]),
    [['tools.modules[1]', 'duplicate_tool']],
  );
  const broken = await one({ 'a.yaml': 'name: a\ntools: { modules: [./t.ts] }', 't.ts': 'throw new Error("boom");' });
  assert.equal(broken.rule, 'bad_module');
  assert.match(broken.message, /failed to load: boom/);
});

test('the catalogue: by name, by exact reference, and readable misses', async () => {
  const cat = await load(folder({ 'a.yaml': 'name: a' }));
  const a = cat.get('a');
  assert.equal(cat.byRef(a.ref), a);
  assert.equal(cat.byRef({ name: 'a', hash: '0'.repeat(64) }), undefined);
  assert.throws(
    () => cat.getByRef({ name: 'a', hash: '0'.repeat(64) }),
    /agent a@000000000000 is not loaded here: this worker has a@/,
  );
  assert.throws(() => cat.get('zz'), /unknown agent "zz" \(this worker has: a, default\)/);
  assert.deepEqual(
    cat.list().map((x) => x.ref.name),
    ['a', 'default'],
  );
});

test('agents defined in code are checked like files; errors name definitions[i]', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-agents-code-'));
  const catalogue = await loadAgents({
    dir,
    toolIds: TOOL_IDS,
    env: {},
    cwd: dir,
    definitions: [{ name: 'coded', instructions: 'From code.', tools: { allow: ['react.*'] } }],
  });
  const coded = catalogue.get('coded');
  assert.equal(coded.file, undefined);
  assert.equal(coded.definition.instructions, 'From code.');
  assert.deepEqual(coded.toolIds, ['react.read', 'react.write', 'react.plan']);
  await assert.rejects(
    loadAgents({
      dir,
      toolIds: TOOL_IDS,
      env: {},
      cwd: dir,
      definitions: [{ name: 'bad', limits: { max_rounds: 0 } }],
    }),
    /definitions\[0\]: limits\.max_rounds: must be an integer from 1 to 100 \[bad_limit\]/,
  );
});

test('tools: [ids] is shorthand for tools.allow; any other shape names the one expected', async () => {
  const dir = folder({
    'short.yaml': 'name: short\ntools: [react.read, react.write]',
    'long.yaml': 'name: long\ntools: { allow: [react.read, react.write] }',
  });
  const cat = await load(dir);
  assert.deepEqual(cat.get('short').toolIds, ['react.read', 'react.write']);
  assert.deepEqual(cat.get('short').definition.tools, { allow: ['react.read', 'react.write'] });
  assert.deepEqual(cat.get('short').definition.tools, cat.get('long').definition.tools);
  const bad = await one({ 'a.yaml': 'name: a\ntools: react.read' });
  assert.equal(bad.field, 'tools');
  assert.match(bad.message, /expected \{ allow: \[tool ids\], modules: \[paths\] \} or a list of tool ids/);
  const inner = await one({ 'a.yaml': 'name: a\ntools: [web_serch]' });
  assert.equal(inner.field, 'tools.allow[0]');
  assert.match(inner.message, /unknown tool id "web_serch"/);
});
