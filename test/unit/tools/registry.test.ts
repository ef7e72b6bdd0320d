import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import {
  BUILTIN_TOOLS,
  createToolRegistry,
  declareTool,
  paramsJsonSchema,
  restrictRegistry,
  ToolRegistry,
  type AnyToolDeclaration,
} from '../../../core/tools';
import { CALL_ID_RE } from '../../../core/timeline/block';
import { callIdFor } from '../../../core/ids';

const registry = createToolRegistry();

test('built-in tools are declared in a fixed order', () => {
  assert.deepEqual(registry.ids(), [
    'react.read',
    'react.write',
    'react.plan',
    'react.hide',
    'react.patch',
    'react.pull',
    'react.checkout',
    'react.rg',
    'react.memsearch',
    'web_fetch',
    'web_search',
  ]);
});

test('every built-in declares strategy, timeout, retry and a summary', () => {
  const strategies = Object.fromEntries(BUILTIN_TOOLS.map((d) => [d.id, d.strategy]));
  assert.deepEqual(strategies, {
    'react.read': 'exploration',
    'react.write': 'exploitation',
    'react.plan': 'neutral',
    'react.hide': 'neutral',
    'react.patch': 'exploitation',
    'react.pull': 'exploration',
    'react.checkout': 'exploration',
    'react.rg': 'exploration',
    'react.memsearch': 'exploration',
    web_fetch: 'exploration',
    web_search: 'exploration',
  });
  for (const d of BUILTIN_TOOLS) {
    assert.ok(d.timeoutMs > 0, d.id);
    assert.ok(d.retry.maximumAttempts >= 1, d.id);
    assert.ok(d.description.length > 20, d.id);
  }
});

test('tool JSON schemas are generated from the zod params', () => {
  for (const d of BUILTIN_TOOLS) {
    const generated = registry.jsonSchema(d.id);
    const direct = z.toJSONSchema(d.params, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    assert.equal(generated.type, 'object', d.id);
    assert.equal('$schema' in generated, false, d.id);
    assert.deepEqual(Object.keys(generated.properties as object), Object.keys(direct.properties as object), d.id);
    assert.deepEqual(generated.required, direct.required, d.id);
  }
  const write = registry.jsonSchema('react.write') as {
    properties: Record<string, { enum?: string[] }>;
    required: string[];
  };
  assert.deepEqual(Object.keys(write.properties), ['path', 'channel', 'content', 'kind']);
  assert.deepEqual(write.properties.channel?.enum, ['canvas', 'timeline_text', 'internal']);
  assert.deepEqual(write.properties.kind?.enum, ['display', 'file']);
  assert.deepEqual(write.required, ['path', 'channel', 'content']);
  const plan = registry.jsonSchema('react.plan') as { properties: Record<string, { enum?: string[] }> };
  assert.deepEqual(plan.properties.mode?.enum, ['new', 'replace', 'activate', 'close']);
});

test('paramsJsonSchema drops the safe-integer noise of .int()', () => {
  const s = paramsJsonSchema(z.object({ n: z.number().int().min(1) }));
  assert.deepEqual(s.properties, { n: { type: 'integer', minimum: 1 } });
});

test('specs() returns provider ToolSpecs', () => {
  const specs = registry.specs();
  assert.equal(specs.length, BUILTIN_TOOLS.length);
  assert.equal(specs.length, 11);
  assert.equal(specs[0]?.name, 'react.read');
  assert.deepEqual(specs[0]?.inputSchema, registry.jsonSchema('react.read'));
});

test('parseParams applies defaults and reports zod issues with paths', () => {
  const ok = registry.parseParams('react.read', { paths: ['fi:turn_1.files/a.md'] });
  assert.deepEqual(ok, {
    ok: true,
    params: { paths: ['fi:turn_1.files/a.md'], items: [], line_numbers: false, stats_only: false },
  });
  const empty = registry.parseParams('react.read', {});
  assert.equal(empty.ok, false);
  const bad = registry.parseParams('react.write', { path: 'files/a.md', channel: 'chat', content: 'x' });
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.equal(bad.issues[0]?.path, 'channel');
  const extra = registry.parseParams('react.hide', { path: 'tc:x', replacement: 'gone', paths: [] });
  assert.equal(extra.ok, false, 'unknown keys are rejected (strict objects)');
  const search = registry.parseParams('web_search', { query: 'temporal' });
  assert.deepEqual(search, { ok: true, params: { query: 'temporal', top_k: 5 } });
  assert.equal(registry.parseParams('web_fetch', { urls: ['ftp://x.org/a'] }).ok, false);
  assert.equal(registry.parseParams('web_fetch', { urls: [] }).ok, false);
});

test('react.plan mode rules', () => {
  assert.equal(registry.parseParams('react.plan', { mode: 'new', steps: ['a', 'b'] }).ok, true);
  assert.equal(registry.parseParams('react.plan', { mode: 'new' }).ok, false);
  assert.equal(registry.parseParams('react.plan', { mode: 'replace', steps: [] }).ok, false);
  assert.equal(registry.parseParams('react.plan', { mode: 'activate' }).ok, false);
  assert.equal(registry.parseParams('react.plan', { mode: 'activate', plan_id: 'plan_a' }).ok, true);
  assert.equal(registry.parseParams('react.plan', { mode: 'close' }).ok, true);
  assert.equal(registry.parseParams('react.plan', { mode: 'close', plan_id: 'p', steps: ['x'] }).ok, false);
});

test('summary formatters for the Temporal UI', () => {
  const s = (id: string, raw: unknown): string => {
    const p = registry.parseParams(id, raw);
    assert.ok(p.ok, id);
    return registry.summary(id, p.params);
  };
  assert.equal(
    s('react.write', { path: 'files/notes.md', channel: 'canvas', content: 'x' }),
    'tool react.write files/notes.md',
  );
  assert.equal(
    s('react.write', { path: 'notes.md', channel: 'internal', content: 'x' }),
    'tool react.write files/notes.md',
    'unqualified paths are shown under files/',
  );
  assert.equal(
    s('react.write', { path: 'outputs/r.md', channel: 'internal', content: 'x' }),
    'tool react.write outputs/r.md',
  );
  assert.equal(s('react.read', { paths: ['a', 'b', 'c'] }), 'tool react.read a, b (+1)');
  assert.equal(s('react.read', { items: [{ path: 'fi:x', line_start: 3 }] }), 'tool react.read fi:x');
  assert.equal(s('react.plan', { mode: 'new', steps: ['a', 'b', 'c'] }), 'tool react.plan new (3 steps)');
  assert.equal(s('react.hide', { path: 'tc:t.c.result', replacement: '…' }), 'tool react.hide tc:t.c.result');
  assert.equal(s('web_search', { query: 'temporal workflows' }), 'tool web_search "temporal workflows"');
  assert.equal(
    s('web_fetch', { urls: ['https://a.example/x', 'https://b.example'] }),
    'tool web_fetch https://a.example/x (+1)',
  );
  const long = s('web_search', { query: 'q'.repeat(380) });
  assert.ok(long.length <= 160 && long.endsWith('…'));
});

test('writesPath only for react.write', () => {
  assert.equal(registry.writesPath('react.write', { path: 'files/a.md' }), 'files/a.md');
  assert.equal(registry.writesPath('react.read', { paths: ['x'] }), undefined);
});

test('registry rejects bad declarations and unknown ids with readable errors', () => {
  const base: AnyToolDeclaration = declareTool({
    id: 'demo.tool',
    description: 'A demo tool for tests.',
    params: z.object({}),
    strategy: 'neutral',
    timeoutMs: 1000,
    retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
    summarize: () => 'tool demo.tool',
  });
  assert.throws(() => new ToolRegistry([base, base]), /duplicate tool id demo\.tool/);
  assert.throws(() => new ToolRegistry([{ ...base, id: 'Bad Id' }]), /invalid tool id/);
  assert.throws(() => new ToolRegistry([{ ...base, timeoutMs: 0 }]), /positive timeoutMs/);
  assert.throws(() => registry.get('nope'), /unknown tool "nope" \(known: react\.read/);
  assert.throws(() => restrictRegistry(registry, ['react.read', 'nope']), /unknown tool "nope"/);
  assert.deepEqual(restrictRegistry(registry, ['web_search', 'react.read']).ids(), ['react.read', 'web_search']);
  assert.deepEqual(
    createToolRegistry({ extra: [base] })
      .ids()
      .at(-1),
    'demo.tool',
  );
});

test('callIdFor derives the same tc_<12 hex> call id from the same key', () => {
  const id = callIdFor('conv/c1/turn/1/round/2/0');
  assert.match(id, CALL_ID_RE);
  assert.equal(callIdFor('conv/c1/turn/1/round/2/0'), id);
  assert.notEqual(callIdFor('conv/c1/turn/1/round/2/1'), id);
});

test('activityOptions maps activity type, timeout, the RetryPolicy unchanged and summary for Temporal', () => {
  const params = registry.parseParams('web_search', { query: 'x' });
  assert.ok(params.ok);
  assert.deepEqual(registry.activityOptions('web_search', params.params), {
    activity: 'runTool',
    startToCloseTimeout: 30_000,
    retry: {
      maximumAttempts: 3,
      initialInterval: 1_000,
      backoffCoefficient: 2,
      maximumInterval: 10_000,
      nonRetryableErrorTypes: ['WebToolInputError'],
    },
    summary: 'tool web_search "x"',
    concurrent: true,
  });
  // Only read-only (exploration) tools run concurrently with their neighbours.
  const write = registry.parseParams('react.write', { path: 'a.md', channel: 'internal', content: 'x', kind: 'file' });
  assert.ok(write.ok);
  assert.equal(registry.activityOptions('react.write', write.params).concurrent, undefined);
});
