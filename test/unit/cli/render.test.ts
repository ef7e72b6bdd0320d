import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamEvent } from '../../../store/stream-bus';
import { createLiveRenderer } from '../../../apps/cli/render';
import { timelineLines } from '../../../apps/cli/commands';
import { makeBlock } from '../../../core/timeline/block';

let seq = 0;
const ev = (kind: string, payload: Record<string, unknown> = {}, extra: Partial<StreamEvent> = {}): StreamEvent =>
  ({
    conversationId: 'c',
    seq: ++seq,
    ts: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seq * 100)).toISOString(),
    turnId: 'turn_1',
    attempt: 1,
    kind,
    payload,
    ...extra,
  }) as StreamEvent;

function renderAll(events: StreamEvent[], opts = {}): { text: string; finished: boolean } {
  let text = '';
  const r = createLiveRenderer((t) => (text += t), opts);
  for (const e of events) r(e);
  return { text, finished: r.finished() };
}

test('a turn renders thinking, a timed tool step, the answer with numbered citations and the end', () => {
  const { text, finished } = renderAll(
    [
      ev('phase', { phase: 'turn.start', turnId: 'turn_1', workflowId: 'conv/c/turn/1' }),
      ev('step', { phase: 'thinking.start', round: 1 }),
      ev('delta', { text: 'let me ', round: 1 }, { channel: 'thinking' }),
      ev('delta', { text: 'look', round: 1 }, { channel: 'thinking' }),
      ev('step', { phase: 'iteration.start', round: 1, tool: 'web.fetch', callId: 'k1', summary: 'fetch the page' }),
      ev('delta', { text: '# notes', path: 'notes.md', callId: 'k1' }, { channel: 'canvas' }),
      ev('step', { phase: 'iteration.done', tool: 'web.fetch', callId: 'k1', ok: true, observation: 'page text' }),
      ev('answer', { phase: 'start' }),
      ev('delta', { text: 'It is [Ex', round: 2 }, { channel: 'answer' }),
      ev('delta', { text: 'ample](https://ex.com/) [[S:2]].', round: 2 }, { channel: 'answer' }),
      ev('answer', { phase: 'done', text: 'It is …' }),
      ev('delta', { text: 'Want more?' }, { channel: 'followup' }),
      ev('done', { completionPath: 'complete', iterations: 2, usage: {} }),
    ],
    { sources: [{ sid: 2, title: 'Two', url: 'https://two.example/' }] },
  );
  assert.ok(finished);
  assert.match(text, /▶ turn_1 started/);
  assert.match(text, /let me look\n/);
  assert.match(text, /⠿ \[round 1\] fetch the page\n/);
  assert.match(text, /▤ canvas: # notes/);
  assert.match(text, /✓ web\.fetch 200 ms page text\n/);
  assert.match(text, /It is Example\[1\] Two\[2\]\.\n/);
  assert.match(text, / {2}\[1\] Example — https:\/\/ex\.com\/\n {2}\[2\] Two — https:\/\/two\.example\/\n/);
  assert.match(text, /↪ suggested: Want more\?\n/);
  assert.match(text, /■ done: complete after 2 rounds/);
});

test('an answer that only arrives complete is printed whole; other turns are skipped when filtered', () => {
  const { text } = renderAll(
    [
      ev('answer', { phase: 'done', text: 'see [A](https://a.io)' }),
      ev('answer', { phase: 'done', text: 'other' }, { turnId: 'turn_2' }),
    ],
    { turnId: 'turn_1' },
  );
  assert.equal(text, 'see A[1]\n  [1] A — https://a.io\n');
});

test('retries, injected events, canvas attributes and compaction are shown', () => {
  const { text } = renderAll([
    ev('retry', { round: 1, attempt: 2 }),
    ev('inject', { type: 'steer', text: 'stop' }),
    ev('attribute', { key: 'title', value: 'Plan' }, { channel: 'canvas' }),
    ev('compact', { phase: 'start', coveredTurns: 14, tokensBefore: 61200, tokensAfter: 9800 }),
  ]);
  assert.match(text, /↻ round 1 retried \(attempt 2\)/);
  assert.match(text, /⇢ steer received: stop/);
  assert.match(text, /▤ canvas\.title = "Plan"/);
  assert.match(text, /⇣ compacting 14 turn\(s\): 61 200 → ~9 800 tokens/);
});

test('every compaction phase has its line, with token counts; a failed turn shows its error', () => {
  const { text } = renderAll([
    ev('compact', { phase: 'over_budget', round: 3, estimate: 8123, budget: 8000 }),
    ev('compact', { phase: 'summarising', coveredBlocks: 40, prefixBlocks: 5 }),
    ev('compact', { phase: 'summarised', summaryChars: 2100 }),
    ev('compact', { phase: 'committed', tokensBefore: 8123, tokensAfter: 4100, kind: 'history' }),
    ev('compact', { phase: 'skipped' }),
    ev('compact', { phase: 'failed', failures: 2, error: 'empty summary' }),
    ev('phase', { phase: 'turn.failed', turnId: 'turn_1', error: 'the conversation no longer fits' }),
  ]);
  assert.match(text, /context over budget in round 3: 8 123 > 8 000 tokens — compacting/);
  assert.match(text, /summarising 40 block\(s\) \+ 5 of this turn/);
  assert.match(text, /summary written \(2100 chars\)/);
  assert.match(text, /compacted: 8 123 → 4 100 tokens \(history\)/);
  assert.match(text, /compaction skipped: it cannot reduce the context/);
  assert.match(text, /compaction failed \(2 in a row\): empty summary/);
  assert.match(text, /✗ turn_1 failed: the conversation no longer fits/);
});

test('native mode: a streamed answer later discarded for tool calls is marked, and the real answer still prints', () => {
  const { text } = renderAll([
    ev('answer', { phase: 'start' }),
    ev('delta', { text: 'Let me check.', round: 1 }, { channel: 'answer' }),
    ev('answer', { phase: 'discarded', round: 1 }),
    ev('step', { phase: 'iteration.start', round: 1, tool: 'react.read', callId: 'k1', summary: 'tool react.read x' }),
    ev('answer', { phase: 'done', text: 'The final answer.' }),
  ]);
  assert.match(text, /that text was a step, not the answer \(round 1\)/);
  assert.match(text, /The final answer\./);
});

test('the code channel streams live under a header', () => {
  const { text } = renderAll([
    ev('delta', { text: 'import json\n', round: 1 }, { channel: 'code' }),
    ev('delta', { text: 'print(1)\n', round: 1 }, { channel: 'code' }),
  ]);
  assert.match(text, /⌨ code\nimport json\nprint\(1\)/);
});

test('dreact timeline shows an exec result with its whole report', () => {
  const ts = '2026-01-01T00:00:00.000Z';
  const lines = timelineLines([
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: 'turn_1',
      ts,
      key: 'tc_0123456789ab',
      call_id: 'tc_0123456789ab',
      text: 'Status: success\nSucceeded:\n  - sum.txt → fi:turn_1.outputs/sum.txt',
      meta: { tool_id: 'exec.python', ok: true },
    }),
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: 'turn_1',
      ts,
      key: 'tc_0123456789ac',
      call_id: 'tc_0123456789ac',
      text: 'plain\nresult',
      meta: { tool_id: 'react.read', ok: true },
    }),
  ]);
  assert.equal(lines.length, 5);
  assert.deepEqual(lines.slice(1, 4), [
    '    │ Status: success',
    '    │ Succeeded:',
    '    │   - sum.txt → fi:turn_1.outputs/sum.txt',
  ]);
  assert.match(lines[4]!, /react\.tool\.result .* plain result$/);
});

test('a turn queued under its tenant limit says its place after it started', () => {
  const { text } = renderAll([
    ev('phase', { phase: 'turn.start', turnId: 'turn_1', workflowId: 'conv/c/turn/1', queuePosition: 2 }),
    ev('step', { phase: 'thinking.start', round: 1 }),
  ]);
  assert.match(text, /▶ turn_1 started \(conv\/c\/turn\/1\)\n… queued \(position 2\) under the tenant's turn limit/);
  const { text: plain } = renderAll([ev('phase', { phase: 'turn.start', turnId: 'turn_1', workflowId: 'w' })]);
  assert.doesNotMatch(plain, /queued/);
});

test('a canvas a round streamed while the model wrote it shows once: not again when its tool replays it, no attribute lines', () => {
  const path = 'fi:turn_1.files/w.json';
  const { text } = renderAll([
    ev('delta', { text: '{"title": "Pl', round: 1, path, index: 0 }, { channel: 'canvas' }),
    ev('attribute', { key: 'title', value: 'Plan', round: 1, path, first: true }, { channel: 'canvas', instance: 7 }),
    ev('delta', { text: 'an"}', round: 1, path, index: 1, completed: true }, { channel: 'canvas' }),
    ev('step', { phase: 'iteration.start', round: 1, tool: 'react.write', callId: 'k1' }),
    ev('delta', { text: '{"title": "Plan"}', path, index: 0, callId: 'k1' }, { channel: 'canvas' }),
    ev('delta', { text: '', path, index: 1, completed: true, callId: 'k1' }, { channel: 'canvas' }),
  ]);
  assert.equal(text.split('{"title"').length - 1, 1, text);
  assert.match(text, /▤ canvas: \{"title": "Plan"\}/);
  assert.doesNotMatch(text, /canvas\.title =/);
});
