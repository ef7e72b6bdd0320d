import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { applyUpdates, DEFAULT_TTL, PRUNE_NOTICE_KIND, ttlPrune } from '../../../core/timeline/prune';
import { renderTimeline } from '../../../core/timeline/render';
import { paths } from '../../../core/timeline/paths';
import { iso, T0, turn } from './_render-fixtures';

const TTL = { cacheTtlSeconds: 300, pruneBufferSeconds: 10, keepRecentTurns: 2, keepRecentIntactTurns: 1 };
const S = 1000;

function history(n: number, current = `t${n + 1}`): Block[] {
  const out: Block[] = [];
  for (let t = 1; t <= n; t++) out.push(...turn(`t${t}`, { rounds: 2, final: true, roundStart: true }));
  out.push(...turn(current, { rounds: 1 }));
  return out;
}

test('defaults follow the reference session config', () => {
  assert.deepEqual(
    { ...DEFAULT_TTL },
    { cacheTtlSeconds: 300, pruneBufferSeconds: 10, keepRecentTurns: 6, keepRecentIntactTurns: 1 },
  );
});

test('first render after load arms the clock instead of pruning', () => {
  const r = ttlPrune(history(5), 't6', T0, { lastTouchAt: null }, TTL);
  assert.equal(r.status, 'armed');
  assert.deepEqual(r.updates, []);
  assert.deepEqual(r.contribute, []);
  assert.equal(r.touchAt, T0);
  assert.equal(ttlPrune(history(5), 't6', T0, undefined, TTL).status, 'armed');
});

test('no pruning before ttl − buffer; expiry exactly at ttl − buffer', () => {
  const blocks = history(5);
  const fresh = ttlPrune(blocks, 't6', T0 + 289 * S, { lastTouchAt: T0 }, TTL);
  assert.equal(fresh.status, 'fresh');
  assert.deepEqual(fresh.updates, []);
  const expired = ttlPrune(blocks, 't6', T0 + 290 * S, { lastTouchAt: T0 }, TTL);
  assert.equal(expired.status, 'expired');
  assert.equal(expired.elapsedSeconds, 290);
  assert.deepEqual(expired.prunedTurnIds, ['t1', 't2', 't3']);
});

test('the stored TTL of the last touch is used when given (first render after a load)', () => {
  const blocks = history(5);
  assert.equal(ttlPrune(blocks, 't6', T0 + 100 * S, { lastTouchAt: T0, ttlSeconds: 60 }, TTL).status, 'expired');
  assert.equal(ttlPrune(blocks, 't6', T0 + 100 * S, { lastTouchAt: T0 }, TTL).status, 'fresh');
});

test('old turns become recovery rows; exactly one system.message for the turn; recent turns untouched', () => {
  const blocks = history(5);
  const r = ttlPrune(blocks, 't6', T0 + 400 * S, { lastTouchAt: T0 }, TTL);
  const byId = new Map(blocks.map((b) => [b.id, b]));
  const touched = new Set(r.updates.map((u) => byId.get(u.blockId)!.turn_id));
  assert.deepEqual([...touched].sort(), ['t1', 't2', 't3']);
  assert.equal(r.contribute.length, 1);
  const msg = r.contribute[0]!;
  assert.equal(msg.type, 'system.message');
  assert.equal(msg.turn_id, 't6');
  assert.equal(msg.meta['kind'], PRUNE_NOTICE_KIND);
  assert.match(msg.text!, /^\[SYSTEM MESSAGE\] Context was pruned because the session TTL \(300s\) was exceeded\./);
  assert.match(msg.text!, /react\.read/);
  // headers are never hidden; round starts are suppressed; prompts become rows with a handle
  for (const u of r.updates) {
    const b = byId.get(u.blockId)!;
    assert.notEqual(b.type, 'turn.header');
    if (b.type === 'react.round.start') assert.equal(u.replacement_text, '');
    if (b.type === 'user.prompt')
      assert.match(
        u.replacement_text,
        new RegExp(
          `^\\[PRUNED TURN DATA\\] turn ${b.turn_id}[^\\n]*\\nuser: path=ar:${b.turn_id}\\.user\\.prompt size=\\d+ hint="question of ${b.turn_id}"$`,
        ),
      );
    if (b.type === 'react.tool.result')
      assert.match(u.replacement_text, /^tool result: path=tc:t\d\.tc_[0-9a-f]{12}\.result size=\d+ hint=/);
  }
  // a second expiry in the same turn adds no second system.message
  const again = ttlPrune(
    [...applyUpdates(blocks, r.updates), ...r.contribute],
    't6',
    T0 + 800 * S,
    { lastTouchAt: T0 + 400 * S },
    TTL,
  );
  assert.deepEqual(again.contribute, []);
  assert.deepEqual(again.updates, []);
});

test('notes, summaries, followups and steers are never pruned; explicit hides keep their replacement', () => {
  const blocks = history(4);
  const ts = iso(T0);
  const keep = [
    makeBlock({
      type: 'react.note',
      author: 'react',
      turn_id: 't1',
      ts,
      path: 'ar:t1.react.note.1',
      text: 'remember: user prefers metric',
    }),
    makeBlock({
      type: 'conv.working.summary',
      author: 'react',
      turn_id: 't1',
      ts,
      path: paths.workingSummary('t1'),
      text: 'goal/outcome',
    }),
    makeBlock({
      type: 'user.followup',
      author: 'user',
      turn_id: 't1',
      ts,
      path: paths.external('t1', 'followup', 'm1'),
      text: 'also Y',
    }),
    makeBlock({
      type: 'user.steer',
      author: 'user',
      turn_id: 't1',
      ts,
      path: paths.external('t1', 'steer', 'm2'),
      text: 'stop',
    }),
  ];
  const t1end = blocks.findIndex((b) => b.turn_id === 't2');
  const hiddenIdx = 1;
  blocks[hiddenIdx] = { ...blocks[hiddenIdx]!, hidden: true, replacement_text: 'MY HIDE' };
  const all = [...blocks.slice(0, t1end), ...keep, ...blocks.slice(t1end)];
  const r = ttlPrune(all, 't5', T0 + 400 * S, { lastTouchAt: T0 }, TTL);
  const ids = new Set(r.updates.map((u) => u.blockId));
  for (const k of keep) assert.ok(!ids.has(k.id), `${k.type} must not be pruned`);
  assert.ok(!ids.has(blocks[hiddenIdx]!.id));
  // the turn with a working summary gets path-only rows (no hints)
  const t1rows = r.updates.filter((u) => u.blockId.startsWith('t1/') && u.replacement_text);
  assert.ok(t1rows.length > 0);
  for (const u of t1rows) assert.ok(!u.replacement_text.includes('hint='));
  assert.match(t1rows[0]!.replacement_text, /See its \[WORKING SUMMARY\]/);
});

test('nothing to prune when the recent window covers every prior turn', () => {
  const r = ttlPrune(history(2), 't3', T0 + 400 * S, { lastTouchAt: T0 }, TTL);
  assert.equal(r.status, 'expired');
  assert.deepEqual(r.updates, []);
  assert.deepEqual(r.contribute, []);
});

test('render applies pruning: [PRUNED TURN DATA] rows, the system.message, and returns the pure result', () => {
  const blocks = history(4);
  const snapshot = structuredClone(blocks);
  const out = renderTimeline(
    { blocks, currentTurnId: 't5', systemPrompt: 'S', cacheState: { lastTouchAt: T0 } },
    { now: T0 + 600 * S, ttl: TTL, debug: true },
  );
  assert.deepEqual(blocks, snapshot, 'input not mutated');
  assert.equal(out.pruning!.status, 'expired');
  assert.equal(out.cacheTouchAt, T0 + 600 * S);
  const text = out.debugText!;
  assert.ok(text.includes('[PRUNED TURN DATA] turn t1'));
  assert.ok(text.includes('[PRUNED TURN DATA] turn t2'));
  assert.ok(!text.includes('[PRUNED TURN DATA] turn t3'));
  assert.ok(!text.includes('"q":"q1"}') || text.indexOf('"q":"q1"}') > text.indexOf('TURN t3'));
  assert.match(text, /\[SYSTEM MESSAGE\] Context was pruned/);
  // armed render: nothing pruned, touch recorded
  const armed = renderTimeline(
    { blocks, currentTurnId: 't5', systemPrompt: 'S', cacheState: { lastTouchAt: null } },
    { now: T0, ttl: TTL, debug: true },
  );
  assert.equal(armed.pruning!.status, 'armed');
  assert.ok(!armed.debugText!.includes('[PRUNED TURN DATA]'));
});

test('skill paths get a removal placeholder with the sk: reference', () => {
  const blocks = history(3);
  const sk = makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 't1',
    ts: iso(T0),
    key: 'skill',
    path: 'sk:pdf-tools',
    text: 'skill body',
  });
  const r = ttlPrune([sk, ...blocks], 't4', T0 + 400 * S, { lastTouchAt: T0 }, { ...TTL, keepRecentTurns: 1 });
  const u = r.updates.find((x) => x.blockId === sk.id)!;
  assert.match(u.replacement_text, /content removed by pruning at this location: skill sk:pdf-tools/);
});

test('bad TTL config is rejected', () => {
  assert.throws(
    () => ttlPrune([], 't1', T0, { lastTouchAt: 0 }, { cacheTtlSeconds: 0 }),
    /cacheTtlSeconds must be > 0/,
  );
  assert.throws(() => ttlPrune([], 't1', T0, { lastTouchAt: 0 }, { keepRecentTurns: -1 }), /keepRecentTurns/);
  assert.throws(() => ttlPrune([], 't1', Number.NaN, { lastTouchAt: 0 }, {}), /epoch/);
});
