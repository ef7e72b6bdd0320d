import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDecisionSystemPrompt,
  DECISION_CHANNEL,
  interpretDecision,
  ReactDecisionOutV2Schema,
} from '../../../core/decision';
import { createToolRegistry, restrictRegistry } from '../../../core/tools';

test('system prompt is byte-identical across calls, registries and turns', () => {
  const a = buildDecisionSystemPrompt(createToolRegistry());
  const b = buildDecisionSystemPrompt(createToolRegistry());
  assert.equal(a, b);
  assert.equal(Buffer.compare(Buffer.from(a), Buffer.from(b)), 0);
  // repeated calls on one registry (one per round) stay identical too
  const reg = createToolRegistry();
  const rounds = Array.from({ length: 5 }, () => buildDecisionSystemPrompt(reg, { multiAction: 'safe_fanout' }));
  assert.equal(new Set(rounds).size, 1);
});

test('system prompt carries no timestamps, ids or turn data', () => {
  const p = buildDecisionSystemPrompt(createToolRegistry(), { multiAction: 'safe_fanout' });
  assert.doesNotMatch(p, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, 'ISO timestamp');
  assert.doesNotMatch(p, /\btc_[0-9a-f]{12}\b/, 'call id');
  assert.doesNotMatch(p, /\bturn_[0-9a-z]/i, 'turn id');
  assert.doesNotMatch(p, /\b1[6-9]\d{11}\b/, 'epoch ms');
});

test('system prompt teaches the wire format', () => {
  const p = buildDecisionSystemPrompt(createToolRegistry());
  for (const needle of [
    '<channel:thinking>',
    `<channel:${DECISION_CHANNEL}>`,
    '<channel:code>',
    '<channel:answer>',
    '<channel:followup>{"followups": ["…"]}</channel:followup>',
    '<channel:summary>',
    '"action": "call_tool"',
    '"tool_call": {"tool_id": "<tool id>", "params": {…}}',
    '"action": "complete"',
    '"action": "exit"',
    'path, channel, content, kind',
    '[[S:n]]',
    'exactly one <channel:ReactDecisionOutV2>',
  ]) {
    assert.ok(p.includes(needle), `prompt lacks ${needle}`);
  }
  const order = ['<channel:thinking>', `<channel:${DECISION_CHANNEL}>`, '<channel:code>', '<channel:answer>'].map((s) =>
    p.indexOf(s),
  );
  assert.deepEqual(
    [...order].sort((x, y) => x - y),
    order,
  );
});

test('system prompt lists every tool with its JSON schema generated from zod', () => {
  const reg = createToolRegistry();
  const p = buildDecisionSystemPrompt(reg);
  for (const id of reg.ids()) {
    assert.ok(p.includes(`## ${id}\nstrategy: ${reg.get(id).strategy}\n`), id);
    assert.ok(p.includes(JSON.stringify(reg.jsonSchema(id))), `schema of ${id}`);
  }
  const only = buildDecisionSystemPrompt(restrictRegistry(createToolRegistry(), ['web_search']));
  assert.ok(!only.includes('## react.write'));
});

test('multi-action section depends only on the mode', () => {
  const reg = createToolRegistry();
  const off = buildDecisionSystemPrompt(reg);
  const on = buildDecisionSystemPrompt(reg, { multiAction: 'safe_fanout' });
  assert.notEqual(off, on);
  assert.match(on, /up to 2 actions in one round/);
  assert.doesNotMatch(off, /up to 2 actions/);
  const withPreface = buildDecisionSystemPrompt(reg, { preface: 'You are the docs assistant.' });
  assert.ok(withPreface.startsWith('You are the docs assistant.\n\n'));
});

test('the canonical decision schema accepts the three documented shapes', () => {
  assert.ok(
    ReactDecisionOutV2Schema.safeParse({
      action: 'call_tool',
      notes: '',
      tool_call: { tool_id: 'web_search', params: { query: 'x' } },
    }).success,
  );
  assert.ok(
    ReactDecisionOutV2Schema.safeParse({ action: 'complete', notes: '', final_answer: 'a', suggested_followups: ['b'] })
      .success,
  );
  assert.ok(ReactDecisionOutV2Schema.safeParse({ action: 'exit', notes: '' }).success);
  assert.ok(!ReactDecisionOutV2Schema.safeParse({ action: 'answer', notes: '' }).success);
});

test('the example responses in the prompt are themselves valid decisions', () => {
  const reg = createToolRegistry();
  const p = buildDecisionSystemPrompt(reg);
  const toolRound = p.split('Example of a tool round:\n\n')[1]!.split('\n\nExample of a final round:')[0]!;
  const finalRound = p.split('Example of a final round:\n\n')[1]!.split('\n\n#')[0]!;
  const a = interpretDecision(toolRound.replace('"…"', '"durable agents"'), reg);
  assert.ok(a.ok && a.actions[0]?.action === 'call_tool', JSON.stringify(a));
  const b = interpretDecision(finalRound, reg);
  assert.ok(b.ok && b.actions[0]?.action === 'complete', JSON.stringify(b));
  if (b.ok) assert.equal(b.answer, 'The answer, citing [[S:1]].');
});
