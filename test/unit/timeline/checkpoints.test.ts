import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import {
  cacheCheckpoints,
  groupEnd,
  preTailIndex,
  roundEnds,
  roundKey,
  rounds,
} from '../../../core/timeline/checkpoints';
import { paths } from '../../../core/timeline/paths';
import { callId, iso, T0, turn } from './_render-fixtures';

const idx = (cps: Array<{ index: number }>) => cps.map((c) => c.index);
const kinds = (cps: Array<{ kind: string }>) => cps.map((c) => c.kind);

/** The reference's worked example: t1 = 1 tool round + final block; t2 = 6 tool rounds. */
function workedExample(): Block[] {
  return [...turn('t1', { rounds: 1, final: true }), ...turn('t2', { rounds: 6 })];
}

test('worked example: round ends and cache indices [4,10,18] (offset 4), [10,18] after a hide', () => {
  const blocks = workedExample();
  assert.deepEqual(roundEnds(blocks), [3, 4, 8, 10, 12, 14, 16, 18]);
  const cps = cacheCheckpoints(blocks, 't2', { offsetRounds: 4, minRounds: 2 });
  assert.deepEqual(idx(cps), [4, 10, 18]);
  assert.deepEqual(kinds(cps), ['previous_turn', 'pre_tail', 'tail']);
  const afterHide = cacheCheckpoints(blocks, 't2', { offsetRounds: 4, minRounds: 2, suppressPrevTurn: true });
  assert.deepEqual(idx(afterHide), [10, 18]);
});

test('worked example with the project defaults (offset 2, min rounds 2): pre-tail at ends[N-1-2]', () => {
  const cps = cacheCheckpoints(workedExample(), 't2');
  assert.deepEqual(idx(cps), [4, 14, 18]);
  assert.deepEqual(kinds(cps), ['previous_turn', 'pre_tail', 'tail']);
  assert.equal(preTailIndex(workedExample(), 't2'), 14);
});

test('multi-turn: previous-turn, pre-tail and tail all present, previous turn = last block before the header', () => {
  const blocks = [
    ...turn('t1', { rounds: 2, final: true }),
    ...turn('t2', { rounds: 2, final: true }),
    ...turn('t3', { rounds: 4, roundStart: true }),
  ];
  const cps = cacheCheckpoints(blocks, 't3');
  assert.deepEqual(kinds(cps), ['previous_turn', 'pre_tail', 'tail']);
  const header = blocks.findIndex((b) => b.turn_id === 't3' && b.type === 'turn.header');
  assert.equal(cps[0]!.index, header - 1);
  assert.equal(blocks[cps[0]!.index]!.type, 'assistant.completion');
  assert.equal(cps[2]!.index, blocks.length - 1);
  // pre-tail = end of round N-1-2 where N counts all complete rounds (t1: 3, t2: 3, t3: 4 → N = 10)
  assert.equal(cps[1]!.index, roundEnds(blocks)[10 - 1 - 2]);
});

test('first short turn: only the tail checkpoint', () => {
  const oneRound = turn('t1', { rounds: 1 });
  assert.deepEqual(cacheCheckpoints(oneRound, 't1'), [{ kind: 'tail', index: oneRound.length - 1 }]);
  const noRounds = turn('t1', { rounds: 0 });
  assert.deepEqual(cacheCheckpoints(noRounds, 't1'), [{ kind: 'tail', index: 1 }]);
  assert.deepEqual(cacheCheckpoints([], 't1'), []);
  // the first round still open: the tail stops before it (the prompt)
  const open = turn('t1', { rounds: 1, openRound: true });
  assert.deepEqual(cacheCheckpoints(open, 't1'), [{ kind: 'tail', index: 1 }]);
});

test('minRounds gates the pre-tail checkpoint', () => {
  const blocks = turn('t1', { rounds: 3 });
  assert.deepEqual(kinds(cacheCheckpoints(blocks, 't1', { minRounds: 3 })), ['pre_tail', 'tail']);
  assert.deepEqual(kinds(cacheCheckpoints(blocks, 't1', { minRounds: 4 })), ['tail']);
  // offset 0 is treated as 1 (pre-tail must differ from the tail)
  assert.deepEqual(idx(cacheCheckpoints(blocks, 't1', { offsetRounds: 0 })), [5, 7]);
});

test('an open round (started, nothing produced) is not the tail; the last complete round is', () => {
  const blocks = turn('t1', { rounds: 3, roundStart: true, openRound: true });
  const last = blocks[blocks.length - 1]!;
  assert.equal(last.type, 'react.round.start');
  const cps = cacheCheckpoints(blocks, 't1', { minRounds: 9 });
  assert.equal(blocks[cps[cps.length - 1]!.index]!.type, 'react.tool.result');
  assert.equal(cps[cps.length - 1]!.index, blocks.length - 2);
  assert.equal(rounds(blocks).at(-1)!.complete, false);
});

test('same-path grouping: a checkpoint moves to the end of a run of blocks sharing its path', () => {
  const ts = iso(T0);
  const att = paths.userAttachment('t1', 'report.pdf');
  const blocks = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: 't1', ts }),
    makeBlock({ type: 'user.prompt', author: 'user', turn_id: 't1', ts, path: paths.userPrompt('t1'), text: 'hi' }),
    makeBlock({
      type: 'user.attachment.meta',
      author: 'user',
      turn_id: 't1',
      ts,
      path: att,
      text: 'report.pdf, 2 pages',
    }),
    makeBlock({
      type: 'user.attachment',
      author: 'user',
      turn_id: 't1',
      ts,
      path: att,
      key: 'bin',
      mime: 'application/pdf',
      base64: 'JVBERi0=',
    }),
    makeBlock({
      type: 'user.attachment',
      author: 'user',
      turn_id: 't1',
      ts,
      path: att,
      key: 'bin2',
      mime: 'text/plain',
      text: 'extracted text',
    }),
    makeBlock({ type: 'react.note', author: 'react', turn_id: 't1', ts, path: 'ar:t1.react.note.1', text: 'note' }),
  ];
  assert.equal(groupEnd(blocks, 2), 4);
  assert.equal(groupEnd(blocks, 0), 0); // no path: no grouping
  // no rounds: block-count fallback puts the pre-tail at n-1-2 = 3, grouped to 4
  assert.deepEqual(cacheCheckpoints(blocks, 't1'), [
    { kind: 'pre_tail', index: 4 },
    { kind: 'tail', index: 5 },
  ]);
});

test('same-path grouping on a round end: react.read content blocks sharing the result path', () => {
  const blocks = turn('t1', { rounds: 3 });
  const id = callId('t1', 1);
  const extra = makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 't1',
    ts: iso(T0),
    key: 'content',
    path: paths.toolResult('t1', id),
    text: 'more',
  });
  // round 1's result followed by a second block with the same path (and no call id of its own)
  blocks.splice(4, 0, { ...extra, call_id: undefined });
  const cps = cacheCheckpoints(blocks, 't1', { minRounds: 1, offsetRounds: 2 });
  assert.equal(cps[0]!.kind, 'pre_tail');
  assert.equal(cps[0]!.index, 4);
});

test('round keys: call_id, meta.tool_call_id, tc: path segment, final-round types', () => {
  const ts = iso(T0);
  const base = { author: 'react' as const, turn_id: 't9', ts };
  assert.equal(
    roundKey(makeBlock({ ...base, type: 'react.notes', call_id: 'tc_aaaaaaaaaaaa', text: 'x' })),
    't9:tc_aaaaaaaaaaaa',
  );
  assert.equal(
    roundKey(makeBlock({ ...base, type: 'react.notice', meta: { tool_call_id: 'tc_bbbbbbbbbbbb' }, text: '{}' })),
    't9:tc_bbbbbbbbbbbb',
  );
  assert.equal(
    roundKey(makeBlock({ ...base, type: 'react.tool.result', path: 'tc:t9.tc_cccccccccccc.result', text: '' })),
    't9:tc_cccccccccccc',
  );
  assert.equal(roundKey(makeBlock({ ...base, type: 'assistant.completion', text: 'a' })), '__final__:t9');
  assert.equal(roundKey(makeBlock({ ...base, type: 'user.prompt', path: 'ar:t9.user.prompt', text: 'q' })), null);
});

test('bad options are rejected with a readable error', () => {
  assert.throws(
    () => cacheCheckpoints(turn('t1', { rounds: 1 }), 't1', { offsetRounds: -1 }),
    /offsetRounds must be an integer/,
  );
  assert.throws(
    () => cacheCheckpoints(turn('t1', { rounds: 1 }), 't1', { minRounds: 1.5 }),
    /minRounds must be an integer/,
  );
});
