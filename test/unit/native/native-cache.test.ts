/**
 * Native renders stay cacheable: every round's request, mapped to Anthropic params and accounted
 * by the emulator's prompt cache, reads the prefix written by the previous round.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { buildNativeSystemPrompt, renderNative } from '../../../core/model/native-render';
import { NativeToolNames } from '../../../core/model/native-tool-names';
import { toAnthropicParams } from '../../../activities/providers/anthropic-request';
import { PromptCache } from '../../emulator/prompt-cache';
import { createToolRegistry } from '../../../core/tools';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const registry = createToolRegistry();
const names = new NativeToolNames(registry.ids());

function round(turn: string, r: number, ts: string): Block[] {
  const id = `tc_${(turn.length * 1000 + r).toString(16).padStart(12, '0')}`;
  return [
    makeBlock({ type: 'react.notes', author: 'assistant', turn_id: turn, ts, key: `r${r}`, text: `step ${r}` }),
    makeBlock({
      type: 'react.round.start',
      author: 'react',
      turn_id: turn,
      ts,
      key: id,
      call_id: id,
      path: `ar:${turn}.react.round.start.${id}`,
      text: 'thinking',
    }),
    makeBlock({
      type: 'react.tool.call',
      author: 'assistant',
      turn_id: turn,
      ts,
      key: id,
      call_id: id,
      path: `tc:${turn}.${id}.call`,
      mime: 'application/json',
      text: JSON.stringify({ tool_id: 'react.read', tool_call_id: id, params: { paths: [`files/${r}.md`] } }),
      meta: { tool_id: 'react.read', provider_tool_use_id: `toolu_${r}` },
    }),
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turn,
      ts,
      key: id,
      call_id: id,
      path: `tc:${turn}.${id}.result`,
      mime: 'text/plain',
      text: `content of file ${r}\n${'lorem ipsum '.repeat(200)}`,
      meta: { ok: true },
    }),
  ];
}

test('each native round reads the cache the previous round wrote', () => {
  const cache = new PromptCache({ minCacheableTokens: 64, now: () => T0 });
  const ts = new Date(T0).toISOString();
  const blocks: Block[] = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: 'turn_1', ts, key: 'header', text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: 'turn_1',
      ts,
      path: 'ar:turn_1.user.prompt',
      text: 'read the files',
    }),
  ];
  const reads: number[] = [];
  for (let r = 1; r <= 6; r++) {
    const out = renderNative(
      {
        blocks,
        currentTurnId: 'turn_1',
        systemPrompt: buildNativeSystemPrompt(),
        sources: [],
        announce: { iteration: r, maxIterations: 10, nowIso: ts },
        tools: registry.specs(),
        names,
      },
      { now: T0 },
    );
    assert.ok(out.breakpoints <= 4);
    const { params } = toAnthropicParams(
      { system: out.system, messages: out.messages, tools: out.tools, maxTokens: 100 },
      { model: 'm' },
    );
    const acc = cache.account(params as unknown as Record<string, unknown>);
    reads.push(acc.cacheReadTokens);
    if (r >= 3)
      assert.ok(
        acc.inputTokens < acc.totalPromptTokens / 3,
        `round ${r}: only the new round should be uncached (input ${acc.inputTokens} of ${acc.totalPromptTokens})`,
      );
    blocks.push(...round('turn_1', r, ts));
  }
  for (let i = 2; i < reads.length; i++) assert.ok(reads[i]! > reads[i - 1]!, `cache reads grow: ${reads.join(', ')}`);
});
