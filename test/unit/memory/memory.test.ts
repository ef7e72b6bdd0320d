/** react.memsearch's pure parts: what a turn indexes, RRF + recency, time phrases, snippets. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anchorsOf, chunkText, memoryEntries } from '../../../core/memory/entries';
import { fuse, liftByRecency, recency, snippet, timeIntent } from '../../../core/memory/rank';
import { makeBlock } from '../../../core/timeline/block';

const TS = '2026-03-10T12:00:00.000Z';
const NOW = new Date('2026-03-10T12:00:00.000Z');

test('memoryEntries: prompt, answer, notes, summaries and attachment text with their read paths; other turns ignored', () => {
  const blocks = [
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: 'turn_2',
      ts: TS,
      path: 'ar:turn_2.user.prompt',
      text: 'Fix ValueError in app/main.py',
    }),
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: 'turn_2',
      ts: TS,
      path: 'ar:turn_2.react.completion',
      text: 'Fixed it.',
    }),
    makeBlock({
      type: 'react.notes',
      author: 'react',
      turn_id: 'turn_2',
      ts: TS,
      path: 'ar:turn_2.react.notes.tc_aaaaaaaaaaaa',
      text: '[D] use pathlib',
    }),
    makeBlock({
      type: 'user.attachment',
      author: 'user',
      turn_id: 'turn_2',
      ts: TS,
      path: 'fi:turn_2.user.attachments/a.pdf',
      mime: 'application/pdf',
      base64: 'AAAA',
      meta: { attachment: 'a.pdf', text: 'Invoice 42' },
    }),
    makeBlock({ type: 'react.tool.result', author: 'react', turn_id: 'turn_2', ts: TS, text: 'not indexed' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: 'turn_1',
      ts: TS,
      path: 'ar:turn_1.user.prompt',
      text: 'other turn',
    }),
  ];
  const entries = memoryEntries(blocks, 'turn_2', 2);
  assert.deepEqual(
    entries.map((e) => [e.target, e.path, e.text]),
    [
      ['user', 'ar:turn_2.user.prompt', 'Fix ValueError in app/main.py'],
      ['assistant', 'ar:turn_2.react.completion', 'Fixed it.'],
      ['notes', 'ar:turn_2.react.notes.tc_aaaaaaaaaaaa', '[D] use pathlib'],
      ['attachment', 'fi:turn_2.user.attachments/a.pdf', 'a.pdf\nInvoice 42'],
    ],
  );
  assert.ok(entries.every((e) => e.turnIndex === 2 && e.key.startsWith('turn_2/')));
  assert.equal(new Set(entries.map((e) => e.key)).size, entries.length);
  assert.equal(entries[0]!.anchors, 'main.py ValueError');
});

test('anchors keep file names, logical paths, error names and ticket ids; chunks overlap', () => {
  assert.equal(
    anchorsOf('see fi:turn_1.files/a.md and report.csv; KeyError; JIRA-1234'),
    'a.md report.csv fi:turn_1.files/a.md KeyError JIRA-1234',
  );
  const chunks = chunkText('x'.repeat(4500), 2000, 200);
  assert.deepEqual(
    chunks.map((c) => c.length),
    [2000, 2000, 900],
  );
  assert.deepEqual(chunkText('short'), ['short']);
});

test('RRF fusion: an entry in both lists beats one in either; recency lifts newer entries', () => {
  const a = { key: 'a', ts: TS };
  const b = { key: 'b', ts: TS };
  const c = { key: 'c', ts: TS };
  const fused = fuse(
    [
      [a, b],
      [c, b],
    ],
    NOW,
  );
  assert.equal(fused[0]!.key, 'b');
  assert.ok(Math.abs(fused[0]!.score - (1 / 62 + 1 / 62) * 1.25) < 1e-12);
  const old = { key: 'old', ts: '2026-02-24T12:00:00.000Z' }; // 14 days: recency 0.25
  const recent = { key: 'new', ts: TS };
  const ranked = fuse([[old, recent]], NOW);
  assert.deepEqual(
    ranked.map((r) => r.key),
    ['new', 'old'],
    'rank 2 today (1/62 × 1.25) passes rank 1 at 14 days (1/61 × 1.0625)',
  );
  assert.ok(Math.abs(ranked[1]!.score - (1 / 61) * (1 + 0.25 * 0.25)) < 1e-12);
  assert.equal(recency('2026-03-03T12:00:00.000Z', NOW), 0.5);
  assert.equal(recency('2027-01-01T00:00:00.000Z', NOW), 1);
});

test('time intent: first / last / turn N / yesterday / N days ago / last week; the rest is searched', () => {
  assert.deepEqual(timeIntent('the first message', NOW), { order: 'oldest', onlyTime: true, rest: '' });
  assert.equal(timeIntent('what did I say in turn 3?', NOW).fromTurn, 3);
  assert.equal(timeIntent('what did I say in turn 3?', NOW).onlyTime, true);
  const y = timeIntent('the schema from yesterday', NOW);
  assert.deepEqual(
    [y.after, y.before, y.onlyTime, y.rest],
    ['2026-03-09T00:00:00.000Z', '2026-03-10T00:00:00.000Z', false, 'schema'],
  );
  // What remains of a question around a time phrase is filler: the turn list of that day.
  const chat = timeIntent('What did we talk about yesterday?', NOW);
  assert.deepEqual([chat.onlyTime, chat.rest], [true, '']);
  const ago = timeIntent('pricing 3 days ago', NOW);
  assert.deepEqual([ago.after, ago.before], ['2026-03-07T00:00:00.000Z', '2026-03-08T00:00:00.000Z']);
  assert.equal(timeIntent('database schema last week', NOW).after, '2026-03-03T12:00:00.000Z');
  assert.equal(timeIntent('the last answer about caching', NOW).order, 'newest');
  assert.deepEqual(timeIntent('caching breakpoints', NOW), { onlyTime: false, rest: 'caching breakpoints' });
});

test('snippets centre on the first query term and mark cuts', () => {
  const text = `${'lorem ipsum '.repeat(60)}the cache breakpoint rule ${'dolor sit '.repeat(60)}`;
  const s = snippet(text, 'breakpoint', 80);
  assert.ok(s.startsWith('…') && s.endsWith('…'));
  assert.match(s, /breakpoint/);
  assert.equal(snippet('short text', 'x'), 'short text');
});

test('lexical alone keeps its scores: a full match a month old beats a partial match from today', () => {
  const old = { key: 'a', ts: '2026-02-08T12:00:00.000Z', raw: 0.6 };
  const fresh = { key: 'b', ts: TS, raw: 0.3 };
  assert.deepEqual(
    liftByRecency([fresh, old], NOW).map((h) => h.key),
    ['a', 'b'],
  );
  const close = { key: 'c', ts: TS, raw: 0.55 };
  assert.equal(liftByRecency([old, close], NOW)[0]!.key, 'c', 'within 25 %, the newer one wins');
  assert.equal(liftByRecency([fresh], NOW)[0]!.score, 0.3 * 1.25);
});
