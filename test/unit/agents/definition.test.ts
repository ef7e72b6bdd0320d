import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AgentDefinitionSchema, agentJsonSchema } from '../../../core/agents/definition';
import { issuesFromZod, fieldPath } from '../../../activities/agents/errors';
import { AGENT_SCHEMA_FILE, renderAgentSchema } from '../../../scripts/agent-schema';

const FULL = {
  $schema: '../docs/agent.schema.json',
  name: 'support',
  description: 'Answers support questions.',
  instructions_file: './support.md',
  model: {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    max_tokens: 8000,
    protocol: 'channels',
    temperature: 0.3,
  },
  roles: {
    title: { model: 'claude-haiku-4-5' },
    tool_selection: { model: 'claude-haiku-4-5' },
    compaction: { max_tokens: 4000 },
    synthesis: { protocol: 'native', answer_synthesis: true },
    judge: { provider: 'scripted', script: 'judge' },
  },
  tools: { allow: ['react.*', 'web_fetch', 'acme.*', '!react.patch'], modules: ['./tools/acme.ts', '@acme/tools'] },
  skills: './skills',
  knowledge: './knowledge',
  limits: { max_rounds: 12, context_max_tokens: 100_000, cache_ttl_seconds: 3600, spend_usd_per_turn: 0.5 },
  approval: { tools: ['web_fetch'], timeout_seconds: 3600, on_timeout: 'deny' },
  multi_action: 'safe_fanout',
  exec: { backend: 'docker', image: 'python:3.12-slim', limits: { timeout_seconds: 120, memory_mb: 512, cpus: 0.5 } },
  subagents: ['researcher'],
  max_depth: 2,
  background: { delegate: false, on_result: 'followup' },
  mcp: {
    servers: {
      github: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer ${secrets.ACME_TOKEN}' } },
      files: { command: 'npx', args: ['server-files'], env: { A: 'b' }, cwd: '.', timeout_seconds: 30, retries: false },
    },
  },
  secrets: { ACME_TOKEN: { env: 'ACME_TOKEN' }, DB_PASSWORD: { file: './secrets/db' } },
  visibility: { tenants: ['acme'], projects: ['globex/web'] },
  schedules: [
    { name: 'morning', cron: '0 7 * * 1-5', timezone: 'Europe/Lisbon', prompt: "Summarise yesterday's tickets" },
  ],
};

const issues = (raw: unknown) => {
  const r = AgentDefinitionSchema.safeParse(raw);
  assert.equal(r.success, false, 'expected a rejection');
  return r.error!.issues.flatMap((i) => issuesFromZod('a.yaml', i));
};

test('a definition using every field parses unchanged (no defaults are filled in)', () => {
  assert.deepEqual(AgentDefinitionSchema.parse(FULL), FULL);
  assert.deepEqual(AgentDefinitionSchema.parse({ name: 'x' }), { name: 'x' });
});

test('unknown fields are rejected at every level, with a hint for renamed ones', () => {
  const found = issues({
    name: 'x',
    max_iterations: 5,
    limits: { max_iterations: 5 },
    model: { provider: 'a', top_k: 1 },
  });
  assert.deepEqual(found.map((i) => `${i.field} ${i.rule}`).sort(), [
    'limits.max_iterations unknown_field',
    'max_iterations unknown_field',
    'model.top_k unknown_field',
  ]);
  assert.match(found.find((i) => i.field === 'limits.max_iterations')!.message, /did you mean max_rounds/);
  for (const [field, value] of [
    ['roles', { planner: {} }],
    ['tools', { allowed: [] }],
    ['exec', { limits: { gpus: 1 } }],
    ['secrets', { A: { env: 'A', file: 'b' } }],
    ['mcp', { servers: { gh: { url: 'https://x.test/mcp', token: 'a' } } }],
    ['approval', { tool: ['*'] }],
  ] as const) {
    const r = issues({ name: 'x', [field]: value });
    assert.ok(
      r.some((i) => i.rule === 'unknown_field' || i.rule === 'invalid_value'),
      `${field}: ${JSON.stringify(r)}`,
    );
  }
});

test("an MCP server's oauth.cross_app_access: a missing or bad field, or both ways of getting a token, is named", () => {
  const xaa = {
    idp_token_endpoint: 'https://idp.example.test/token',
    idp_client_id: 'dreact-at-idp',
    id_token: '${secrets.ID}',
    client_id: 'dreact',
    client_secret: '${secrets.KEY}',
  };
  const at = (oauth: unknown) =>
    issues({ name: 'x', mcp: { servers: { s: { url: 'https://s.test/mcp', oauth } } } }).map(
      (i) => `${i.field} ${i.rule}`,
    );
  const base = 'mcp.servers.s.oauth.cross_app_access';
  for (const field of ['idp_token_endpoint', 'idp_client_id', 'id_token', 'client_id', 'client_secret'])
    assert.deepEqual(
      at({ cross_app_access: { ...xaa, [field]: undefined } }),
      [`${base}.${field} invalid_value`],
      field,
    );
  assert.deepEqual(at({ cross_app_access: { ...xaa, idp_token_endpoint: 'idp.test/token' } }), [
    `${base}.idp_token_endpoint invalid_value`,
  ]);
  assert.deepEqual(
    at({ cross_app_access: xaa, client_credentials: { client_id: 'c', client_secret: '${secrets.KEY}' } }),
    [`${base} conflict`],
  );
  // The same for client_credentials (it was "Invalid input" at mcp.servers.s: neither server shape fit).
  assert.deepEqual(at({ client_credentials: { client_secret: '${secrets.KEY}' } }), [
    'mcp.servers.s.oauth.client_credentials.client_id invalid_value',
  ]);
});

test('limits outside their range are bad_limit, with the range in the message', () => {
  const found = issues({
    name: 'x',
    limits: { max_rounds: 0, context_max_tokens: 999, cache_ttl_seconds: 1.5 },
    max_depth: 9,
    model: { provider: 'anthropic', max_tokens: 100_000 },
  });
  const byField = Object.fromEntries(found.map((i) => [i.field, i]));
  for (const f of [
    'limits.max_rounds',
    'limits.context_max_tokens',
    'limits.cache_ttl_seconds',
    'max_depth',
    'model.max_tokens',
  ])
    assert.equal(byField[f]?.rule, 'bad_limit', f);
  assert.match(byField['limits.max_rounds']!.message, /integer from 1 to 100/);
  assert.equal(issues({ name: 'x', limits: { max_rounds: '5' } })[0]!.rule, 'bad_limit');
});

test('bad globs, duplicates and conflicting instructions carry their rule', () => {
  const found = issues({
    name: 'x',
    instructions: 'a',
    instructions_file: 'b.md',
    tools: { allow: ['web_*', 'Web', 'web_*'] },
    subagents: ['a', 'a'],
  });
  assert.deepEqual(
    found.map((i) => `${i.field} ${i.rule}`).sort(),
    [
      'instructions_file conflict',
      'subagents[1] duplicate',
      'tools.allow[1] bad_glob',
      'tools.allow[2] duplicate',
    ].sort(),
  );
});

test('names, providers and secret names are slugs / identifiers', () => {
  assert.equal(issues({ name: 'Support Bot' })[0]!.field, 'name');
  assert.equal(issues({ name: 'x', model: { provider: 'Anthropic' } })[0]!.field, 'model.provider');
  assert.equal(
    issues({ name: 'x', model: { model: 'm' } })[0]!.field,
    'model.provider',
    'the main model names its provider',
  );
  assert.equal(issues({ name: 'x', secrets: { 'bad-name': { env: 'X' } } })[0]!.field, 'secrets.bad-name');
  assert.equal(AgentDefinitionSchema.safeParse({ name: 'x', roles: { title: { model: 'm' } } }).success, true);
});

test('fieldPath writes list indices in brackets', () => {
  assert.equal(fieldPath(['tools', 'allow', 2]), 'tools.allow[2]');
  assert.equal(fieldPath([]), '(top level)');
});

test('the JSON Schema is strict, covers every field and gives limits their ranges', () => {
  const schema = agentJsonSchema() as {
    additionalProperties: boolean;
    required: string[];
    properties: Record<string, { properties?: Record<string, { minimum?: number; maximum?: number }> }>;
  };
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, ['name']);
  assert.deepEqual(Object.keys(schema.properties).sort(), [...Object.keys(FULL), 'instructions'].sort());
  assert.deepEqual(schema.properties.limits!.properties!.max_rounds, {
    description: 'Most rounds (model decisions) per turn.',
    type: 'integer',
    minimum: 1,
    maximum: 100,
  });
});

test('docs/agent.schema.json is current (regenerate: node --import tsx scripts/agent-schema.ts)', async () => {
  assert.equal(readFileSync(AGENT_SCHEMA_FILE, 'utf8'), await renderAgentSchema());
});

test('docs/agents.md: the example agent file follows the schema', () => {
  const doc = readFileSync(path.join(__dirname, '../../../docs/agents.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, 'a yaml example');
  const parsed = AgentDefinitionSchema.safeParse(parseYaml(block));
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
  assert.equal(parsed.data.name, 'support');
});
