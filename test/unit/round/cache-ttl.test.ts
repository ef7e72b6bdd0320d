/**
 * docs/agents.md: "`limits.cache_ttl_seconds` — the provider's prompt-cache TTL". It drives the
 * round's TTL pruning (both protocols render with the agent's TTL) and the provider's cache
 * lifetime (Anthropic `cache_control.ttl`, the nearest the API offers).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createToolRegistry } from '../../../core/tools';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { cacheLifetime } from '../../../core/model/provider';
import { loadAgents } from '../../../activities/agents/loader';
import { createAgentViews } from '../../../activities/agents/view';
import { channelsStrategy } from '../../../activities/turn/round/channels-strategy';
import { nativeStrategy } from '../../../activities/turn/round/native-strategy';
import { toAnthropicParams } from '../../../activities/providers/anthropic-request';
import type { RoundView } from '../../../activities/turn/round/strategy';

const TS = '2026-03-01T10:00:00.000Z';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');

async function views() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-ttl-'));
  writeFileSync(path.join(dir, 'hourly.yaml'), 'name: hourly\nlimits: { cache_ttl_seconds: 3600 }\n');
  const registry = createToolRegistry();
  const catalogue = await loadAgents({ dir, toolIds: registry.ids(), env: {} });
  const v = createAgentViews(catalogue, registry, {
    model: { provider: 'scripted', maxTokens: 8192 },
    maxRounds: 15,
    contextMaxTokens: 80_000,
    multiAction: 'off',
    cacheTtlSeconds: 300,
  });
  return { hourly: v.view(catalogue.get('hourly').ref), standard: v.view(catalogue.get('default').ref) };
}

/** Nine finished turns with a large tool result each, then the current turn's prompt. */
function timeline(): Block[] {
  const out: Block[] = [];
  for (let n = 1; n <= 10; n++) {
    const t = `turn_${n}`;
    const id = `tc_${n.toString(16).padStart(12, '0')}`;
    out.push(
      makeBlock({ type: 'turn.header', author: 'system', turn_id: t, ts: TS, key: 'h', text: '' }),
      makeBlock({ type: 'user.prompt', author: 'user', turn_id: t, ts: TS, key: 'p', text: `question ${n}` }),
    );
    if (n === 10) break;
    out.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'assistant',
        turn_id: t,
        ts: TS,
        key: id,
        call_id: id,
        mime: 'application/json',
        text: JSON.stringify({ tool_id: 'web_fetch', tool_call_id: id, params: { url: 'https://example.com' } }),
        meta: { tool_id: 'web_fetch' },
      }),
      makeBlock({
        type: 'react.tool.result',
        author: 'tool',
        turn_id: t,
        ts: TS,
        key: id,
        call_id: id,
        text: 'page text '.repeat(400),
        meta: { tool_id: 'web_fetch' },
      }),
      makeBlock({ type: 'assistant.completion', author: 'assistant', turn_id: t, ts: TS, key: 'c', text: 'ok' }),
    );
  }
  return out;
}

function view(agent: RoundView['agent'], idleMinutes: number): RoundView {
  return {
    input: {
      turn: { conversationId: 'c1', turnId: 'turn_10', turnIndex: 10, overrides: { model: { provider: 'anthropic' } } },
      conversationId: 'c1',
      turnId: 'turn_10',
      turnIndex: 10,
      round: 1,
      mode: 'normal',
      events: [],
      iteration: { index: 1, max: 15, base: 15, bonus: 0 },
    },
    blocks: timeline(),
    registry: agent.registry,
    sources: [],
    announce: { iteration: 1, maxIterations: 15 },
    cacheState: { lastTouchAt: NOW - idleMinutes * 60_000 },
    now: NOW,
    suppressPrevTurnCache: false,
    agent,
  };
}

test("the agent's cache_ttl_seconds drives TTL pruning in both protocols (10 idle minutes: an hour-long cache is still warm)", async () => {
  const { hourly, standard } = await views();
  for (const strategy of [channelsStrategy(), nativeStrategy()]) {
    const warm = strategy.render(view(hourly, 10)).pruning;
    assert.equal(warm?.ttlSeconds, 3600, strategy.protocol);
    assert.equal(warm?.status, 'fresh', `${strategy.protocol}: 10 minutes into a 1-hour cache nothing is pruned`);
    assert.deepEqual(warm?.prunedTurnIds, []);
    const cold = strategy.render(view(standard, 10)).pruning;
    assert.equal(cold?.ttlSeconds, 300, strategy.protocol);
    assert.equal(cold?.status, 'expired', `${strategy.protocol}: 10 minutes past a 5-minute cache prunes`);
    assert.ok((cold?.prunedTurnIds.length ?? 0) > 0);
  }
});

test('Anthropic requests carry the nearest cache lifetime the API offers (5m default, 1h)', () => {
  assert.equal(cacheLifetime(undefined), '5m');
  assert.equal(cacheLifetime(300), '5m');
  assert.equal(cacheLifetime(900), '5m');
  assert.equal(cacheLifetime(1950), '5m');
  assert.equal(cacheLifetime(2000), '1h');
  assert.equal(cacheLifetime(3600), '1h');
  assert.equal(cacheLifetime(86_400), '1h');
  const request = {
    system: [{ text: 'sys', cache: true }],
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'q', cache: true }] }],
    tools: [{ name: 't', description: 'd', inputSchema: { properties: {} }, cache: true }],
    maxTokens: 10,
  };
  const controls = (ttl: number | undefined) => {
    const { params } = toAnthropicParams({ ...request, ...(ttl ? { cacheTtlSeconds: ttl } : {}) }, { model: 'm' });
    const sys = params.system as Array<{ cache_control?: unknown }>;
    const msg = params.messages[0]!.content as Array<{ cache_control?: unknown }>;
    const tools = params.tools as Array<{ cache_control?: unknown }>;
    return [sys[0]!.cache_control, msg[0]!.cache_control, tools[0]!.cache_control];
  };
  assert.deepEqual(controls(3600), Array(3).fill({ type: 'ephemeral', ttl: '1h' }));
  assert.deepEqual(controls(300), Array(3).fill({ type: 'ephemeral' }));
  assert.deepEqual(controls(undefined), Array(3).fill({ type: 'ephemeral' }));
});
