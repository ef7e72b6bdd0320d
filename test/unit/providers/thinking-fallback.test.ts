/**
 * Extended thinking across a fallback to a model without it: a tool loop whose last assistant
 * message was answered without a thinking block (by the fallback) continues on the thinking model
 * with thinking off for that call (the API refuses it otherwise), with a warning; a loop whose
 * assistant message carries its signed block keeps thinking; a fallback entry's own thinking budget
 * on a model without thinking is a start-time problem naming the entry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toAnthropicParams } from '../../../activities/model/adapters/anthropic-request';
import { abilityProblems } from '../../../core/model/abilities';
import type { ModelMessage, ModelRequest } from '../../../core/model/provider';

const toolLoop = (assistant: ModelMessage['content']): ModelRequest => ({
  system: [{ text: 's' }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'q' }] },
    { role: 'assistant', content: assistant },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'ok' }] },
  ],
  tools: [{ name: 'react_write', description: 'd', inputSchema: {} }],
  maxTokens: 4000,
});
const call = { type: 'tool_use' as const, id: 'toolu_1', name: 'react_write', input: {} };

test('a tool loop answered without thinking continues with thinking off (warned); a signed loop keeps it', () => {
  const defaults = { model: 'claude-sonnet-5-5', thinking: { budgetTokens: 2048 } };
  const off = toAnthropicParams(toolLoop([{ type: 'text', text: 'writing' }, call]), defaults);
  assert.equal(off.params.thinking, undefined);
  assert.deepEqual(
    off.warnings.map((w) => w.code),
    ['thinking_off_in_tool_loop'],
  );
  const signed = toAnthropicParams(toolLoop([{ type: 'thinking', text: 't', signature: 'sig' }, call]), defaults);
  assert.deepEqual(signed.params.thinking, { type: 'enabled', budget_tokens: 2048 });
  assert.deepEqual(signed.warnings, []);
  // No tool loop (a first round, a finished turn): thinking as configured.
  const plain = toAnthropicParams({ ...toolLoop([]), messages: [toolLoop([])['messages'][0]!] }, defaults);
  assert.deepEqual(plain.params.thinking, { type: 'enabled', budget_tokens: 2048 });
});

test("a fallback entry's own thinking on a model without it is a problem; the main model's thinking is not the fallback's", () => {
  assert.deepEqual(
    abilityProblems('agent a', {
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
      thinking: { budgetTokens: 2048 },
      fallbacks: [
        { provider: 'anthropic', model: 'claude-3-5-haiku' },
        { provider: 'openai', model: 'gpt-4o-mini' },
      ],
    }),
    [],
  );
  assert.deepEqual(
    abilityProblems('agent a', {
      provider: 'anthropic',
      fallbacks: [{ provider: 'anthropic', model: 'claude-3-5-haiku', thinking: { budget_tokens: 2048 } }],
    }),
    [
      'agent a asks for thinking with a budget but anthropic model claude-3-5-haiku (model.fallbacks[0]) has no budgeted extended thinking',
    ],
  );
});
