import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { defineTool, isDefinedTool, type ToolRunContext } from '../../../workers/sdk/tools';
import type { AgentToolContext } from '../../../activities/agents/define-tool';
import { SecretValues } from '../../../activities/agents/secrets';
import { createToolRegistry } from '../../../core/tools';
import { checkToolParams } from '../../../activities/tools';
import type { ToolContext } from '../../../activities/tools/types';
import type { ToolStore } from '../../../store/tool-store';

function toolContext(extra: AgentToolContext = {}): ToolContext & AgentToolContext {
  return {
    store: {} as ToolStore,
    conversationId: 'c1',
    turnId: 'turn_1',
    callId: 'tc_000000000001',
    signal: new AbortController().signal,
    heartbeat: () => {},
    now: () => new Date('2026-01-01T00:00:00Z'),
    stream: (() => {}) as ToolContext['stream'],
    ...extra,
  };
}

const weather = defineTool({
  id: 'acme.weather',
  description: 'Current weather for a city.',
  params: z.object({ city: z.string(), units: z.enum(['c', 'f']).default('c'), days: z.number().int().optional() }),
  strategy: 'exploration',
  summary: ({ city, units }) => `weather ${city} (${units.toUpperCase()})`,
  run: async ({ city, units, days }) => ({ ok: true, text: `${city}: 21°${units}${days ? ` for ${days} days` : ''}` }),
});

test('defaults: strategy unknown, 60 s, 3 attempts, summary "tool <id>", the shared runTool activity', () => {
  const t = defineTool({ id: 'acme.ping', description: 'Ping.', params: z.object({}), run: async () => 'pong' });
  assert.equal(t.declaration.strategy, 'unknown');
  assert.equal(t.declaration.timeoutMs, 60_000);
  assert.deepEqual(t.declaration.retry, { maximumAttempts: 3 });
  const registry = createToolRegistry({ extra: [t.declaration] });
  assert.deepEqual(registry.activityOptions('acme.ping', {}), {
    activity: 'runTool',
    startToCloseTimeout: 60_000,
    retry: { maximumAttempts: 3 },
    summary: 'tool acme.ping',
  });
  assert.equal(t.impl.id, 'acme.ping');
  assert.ok(isDefinedTool(t));
});

test('options reach the declaration the registry and the workflow use', () => {
  const t = defineTool({
    id: 'acme.report',
    description: 'Builds a report.',
    params: z.object({ q: z.string() }),
    strategy: 'exploitation',
    timeoutMs: 5_000,
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['BadQuery'] },
    summary: ({ q }) => `report ${q}`,
    ownActivity: { name: 'acmeReport', heartbeatTimeoutMs: 10_000, taskQueue: 'reports' },
    run: async ({ q }) => q,
  });
  const registry = createToolRegistry({ extra: [t.declaration] });
  assert.deepEqual(registry.activityOptions('acme.report', { q: 'sales' }), {
    activity: 'acmeReport',
    startToCloseTimeout: 5_000,
    heartbeatTimeout: 10_000,
    taskQueue: 'reports',
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['BadQuery'] },
    summary: 'report sales',
  });
  const local = defineTool({
    id: 'acme.note',
    description: 'Note.',
    params: z.object({}),
    local: true,
    run: async () => '',
  });
  assert.equal(createToolRegistry({ extra: [local.declaration] }).activityOptions('acme.note', {}).local, true);
  const named = defineTool({
    id: 'acme.x',
    description: 'X.',
    params: z.object({}),
    ownActivity: 'acmeX',
    run: async () => '',
  });
  assert.deepEqual(named.declaration.activity, { name: 'acmeX' });
});

test('run gets the params as the tool activity parsed them: typed, defaults applied', async () => {
  const registry = createToolRegistry({ extra: [weather.declaration] });
  const checked = checkToolParams(registry, 'acme.weather', { city: 'Oslo' });
  assert.ok(checked.ok);
  assert.deepEqual(await weather.impl.run(checked.params, toolContext()), { ok: true, text: 'Oslo: 21°c' });
  assert.equal(registry.summary('acme.weather', checked.params), 'weather Oslo (C)');
  const bad = checkToolParams(registry, 'acme.weather', { city: 3 });
  assert.equal(bad.ok, false, 'invalid params never reach run: an observation instead');
  assert.deepEqual(registry.jsonSchema('acme.weather').required, ['city']);
});

test('the retry contract: a throw propagates (Temporal retries), ok:false and strings are observations', async () => {
  const boom = new Error('upstream 503');
  const thrower = defineTool({
    id: 'acme.t',
    description: 'T.',
    params: z.object({}),
    run: async () => {
      throw boom;
    },
  });
  await assert.rejects(thrower.impl.run({}, toolContext()), (err) => err === boom);
  const refuser = defineTool({
    id: 'acme.r',
    description: 'R.',
    params: z.object({}),
    run: async () => ({ ok: false, text: 'no such city', meta: { code: 404 } }),
  });
  assert.deepEqual(await refuser.impl.run({}, toolContext()), { ok: false, text: 'no such city', meta: { code: 404 } });
  const texter = defineTool({ id: 'acme.s', description: 'S.', params: z.object({}), run: async () => 'plain' });
  assert.deepEqual(await texter.impl.run({}, toolContext()), { ok: true, text: 'plain' });
});

test('a return that is neither an observation nor a string is a non-retryable ToolContractError', async () => {
  const wrong = defineTool({
    id: 'acme.w',
    description: 'W.',
    params: z.object({}),
    run: async () => ({ result: 42 }) as unknown as string,
  });
  await assert.rejects(wrong.impl.run({}, toolContext()), (err) => {
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'ToolContractError');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /tool acme\.w returned an object without boolean ok and string text \(keys: result\)/);
    return true;
  });
});

test('ctx: ids, signal, heartbeat, clock, the agent, secrets by name, a logger with the tool attached', async () => {
  let seen: ToolRunContext | undefined;
  const beats: unknown[] = [];
  const t = defineTool({
    id: 'acme.ctx',
    description: 'Ctx.',
    params: z.object({}),
    run: async (_p, ctx) => {
      seen = ctx;
      ctx.heartbeat({ step: 1 });
      return { ok: true, text: ctx.secret('TOKEN').length.toString() };
    },
  });
  const agent = {
    ref: { name: 'support', hash: 'a'.repeat(64) },
    settings: {} as NonNullable<AgentToolContext['agent']>['settings'],
  };
  const ctx = toolContext({ agent, secrets: new SecretValues(new Map([['TOKEN', 'abcd']])) });
  ctx.heartbeat = (d) => beats.push(d);
  assert.deepEqual(await t.impl.run({}, ctx), { ok: true, text: '4' });
  assert.equal(seen!.callId, 'tc_000000000001');
  assert.equal(seen!.signal, ctx.signal);
  assert.equal(seen!.agent, agent);
  assert.equal(seen!.now().toISOString(), '2026-01-01T00:00:00.000Z');
  assert.deepEqual(beats, [{ step: 1 }]);
  assert.throws(() => seen!.secret('OTHER'), /secret "OTHER" is not declared by this agent \(declared: TOKEN\)/);
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((s: string) => lines.push(s) > 0) as typeof process.stderr.write;
  try {
    seen!.log.info('looked up', { city: 'Oslo' });
  } finally {
    process.stderr.write = write;
  }
  assert.deepEqual(lines, ['[INFO] looked up {"tool":"acme.ctx","callId":"tc_000000000001","city":"Oslo"}\n']);
  const bare = defineTool({
    id: 'acme.b',
    description: 'B.',
    params: z.object({}),
    run: async (_p, c) => c.secret('X'),
  });
  await assert.rejects(bare.impl.run({}, toolContext()), /secret "X": this call runs without an agent's secrets/);
});

test('definition errors name the tool and the problem', () => {
  const base = { description: 'D.', params: z.object({}), run: async () => '' };
  assert.throws(() => defineTool({ ...base, id: 'Acme.Weather' }), /defineTool\("Acme.Weather"\): invalid tool id/);
  assert.throws(() => defineTool({ ...base, id: 'acme.d', description: ' ' }), /acme\.d has no description/);
  assert.throws(() => defineTool({ ...base, id: 'acme.t', timeoutMs: 0 }), /needs a positive timeoutMs/);
  assert.throws(() => defineTool({ ...base, id: 'acme.r', retry: { maximumAttempts: 0 } }), /maximumAttempts >= 1/);
  assert.throws(() => defineTool({ ...base, id: 'acme.p', params: z.string() }), /params must be a zod object schema/);
  assert.equal(defineTool({ ...base, id: 'acme.a', needsApproval: true }).declaration.needsApproval, true);
  assert.throws(
    () => defineTool({ ...base, id: 'acme.b', needsApproval: 'yes' as unknown as boolean }),
    /needsApproval must be a boolean or a function/,
  );
  assert.throws(
    () => defineTool({ ...base, id: 'acme.l', local: true, ownActivity: 'x' }),
    /either local or has an activity/,
  );
  assert.throws(() => defineTool({ ...base, id: 'acme.o', ownActivity: 'bad-name' }), /invalid activity name/);
  assert.doesNotThrow(() => defineTool({ ...base, id: 'acme.n', needsApproval: false }));
});

test('isDefinedTool recognises pairs only', () => {
  assert.equal(isDefinedTool(weather), true);
  assert.equal(
    isDefinedTool({ declaration: weather.declaration, impl: { id: 'other', run: weather.impl.run } }),
    false,
  );
  for (const v of [null, undefined, 1, 'x', {}, [weather], { declaration: {}, impl: {} }])
    assert.equal(isDefinedTool(v), false);
});

test('the package entry durable-react/tools (package.json exports) is this module', () => {
  // A runtime require: a typed self-name import needs `rootDir` in tsconfig (TS2209).
  const entry = require('durable-react/tools') as typeof import('../../../workers/sdk/tools');
  assert.equal(entry.defineTool, defineTool);
});
