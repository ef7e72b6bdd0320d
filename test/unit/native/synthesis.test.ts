import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { capText, SYNTHESIS_RESULT_CHARS, synthesisMessages } from '../../../core/turn/synthesis';

const TS = '2026-11-21T10:00:00.000Z';
const b = (
  turn: string,
  type: Parameters<typeof makeBlock>[0]['type'],
  key: string,
  text: string,
  extra: Partial<Parameters<typeof makeBlock>[0]> = {},
) => makeBlock({ type, author: 'user', turn_id: turn, ts: TS, key, text, ...extra });

test('capText keeps short text and cuts long text at the cap with a marker', () => {
  assert.equal(capText('short'), 'short');
  const long = 'x'.repeat(SYNTHESIS_RESULT_CHARS + 500);
  const cut = capText(long);
  assert.ok(cut.startsWith('x'.repeat(SYNTHESIS_RESULT_CHARS)));
  assert.match(cut, /\[cut: 500 more characters\]$/);
});

test('synthesisMessages: earlier turns, question, steer, numbered calls with capped results, the draft', () => {
  const big = 'R'.repeat(5000);
  const blocks = [
    b('turn_1', 'user.prompt', 'p1', 'What is X?'),
    b('turn_1', 'assistant.completion', 'c1', 'X is a letter.', { author: 'assistant' }),
    b('turn_2', 'user.prompt', 'p2', 'And Y?'),
    b('turn_2', 'react.notes', 'n1', 'Searching', { author: 'assistant' }),
    b(
      'turn_2',
      'react.tool.call',
      'tc_000000000001',
      JSON.stringify({ tool_id: 'web_search', params: { query: 'Y' } }),
      { call_id: 'tc_000000000001', author: 'assistant' },
    ),
    b(
      'turn_2',
      'react.tool.call',
      'tc_000000000002',
      JSON.stringify({ tool_id: 'react.read', params: { paths: ['a'] } }),
      { call_id: 'tc_000000000002', author: 'assistant' },
    ),
    b('turn_2', 'react.tool.result', 'tc_000000000002', 'not found', {
      call_id: 'tc_000000000002',
      author: 'tool',
      meta: { ok: false },
    }),
    b('turn_2', 'react.tool.result', 'tc_000000000001', big, {
      call_id: 'tc_000000000001',
      author: 'tool',
      meta: { ok: true },
    }),
    b('turn_2', 'user.steer', 'm3', 'only the short version'),
    b('turn_3', 'user.prompt', 'p3', 'not yet'),
  ];
  const [msg] = synthesisMessages(blocks, 'turn_2', 'Y is next after X.');
  assert.equal(msg!.role, 'user');
  const text = msg!.content[0]!.type === 'text' ? msg!.content[0]!.text : '';
  assert.match(text, /# Earlier in the conversation\nUser: What is X\?\nAssistant: X is a letter\./);
  assert.match(text, /# Question\nAnd Y\?/);
  assert.match(text, /Agent note: Searching/);
  assert.match(text, /Tool call 1: web_search \{"query":"Y"\}/);
  assert.match(text, /Result 2 \(error\): not found/);
  assert.match(text, /Result 1 \(ok\): R{2000}\n… \[cut: 3000 more characters\]/);
  assert.doesNotMatch(text, /R{2001}/);
  assert.match(text, /\[steer from the user\] only the short version/);
  assert.match(text, /# Draft answer from the tool loop\nY is next after X\./);
  assert.doesNotMatch(text, /not yet/);
});

test('synthesisMessages: a turn without tools says so; hidden blocks show their replacement', () => {
  const blocks = [
    { ...b('turn_1', 'user.prompt', 'p1', 'secret question'), hidden: true, replacement_text: '[HIDDEN] q' },
  ];
  const text = JSON.stringify(synthesisMessages(blocks, 'turn_1', ''));
  assert.match(text, /\[HIDDEN\] q/);
  assert.match(text, /\(no tool calls\)/);
  assert.match(text, /\(none\)/);
});
