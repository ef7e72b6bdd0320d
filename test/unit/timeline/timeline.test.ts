import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { announce, applyBlockUpdates, clearAnnounce, contribute, createTimeline, hidePath, persistedBlocks, renderTimelineValue } from '../../../core/timeline/timeline';
import { paths } from '../../../core/timeline/paths';
import { callId, iso, T0, turn } from './_render-fixtures';

test('contribute appends persistent blocks and is idempotent by id', () => {
  const t1 = turn('t1', { rounds: 1 });
  const tl = contribute(createTimeline(), t1);
  assert.equal(tl.blocks.length, t1.length);
  const again = contribute(tl, t1);
  assert.equal(again, tl, 'identical re-contribution is a no-op');
  const hidden = applyBlockUpdates(tl, [{ blockId: t1[2]!.id, hidden: true, replacement_text: 'R' }]);
  assert.equal(contribute(hidden, t1[2]!), hidden, 'a retried append after a hide is still a no-op');
  const clash = { ...t1[1]!, text: 'different' };
  assert.throws(() => contribute(tl, clash), /already holds a different block/);
  assert.throws(() => contribute(tl, { ...t1[1]!, id: 'x', type: 'nope' as never }), /contribute: invalid block x/);
});

test('announce blocks are ephemeral: rendered, never persisted, cleared per round', () => {
  const note = makeBlock({ type: 'stage.announce', author: 'system', turn_id: 't1', ts: iso(T0), text: '[ACTIVE STATE] two steps left' });
  let tl = announce(createTimeline(turn('t1', { rounds: 2 })), [note]);
  assert.equal(tl.announce.length, 1);
  assert.ok(!persistedBlocks(tl).some((b) => b.id === note.id));
  const { output } = renderTimelineValue(tl, { currentTurnId: 't1', systemPrompt: 'S', announce: { iteration: 3, maxIterations: 15 } }, { now: T0 });
  const last = output.messages[0]!.content.at(-1)!;
  assert.ok(last.type === 'text' && last.text.endsWith('[ACTIVE STATE] two steps left'));
  assert.equal(last.cache, undefined);
  tl = clearAnnounce(tl);
  assert.equal(tl.announce.length, 0);
});

test('persistedBlocks keeps only the slice from the last compaction summary', () => {
  const sum = makeBlock({ type: 'conv.range.summary', author: 'system', turn_id: 't2', ts: iso(T0), path: paths.rangeSummary('t2'), text: 'summary' });
  const tl = createTimeline([...turn('t1', { rounds: 1, final: true }), sum, ...turn('t2', { rounds: 1 })]);
  const kept = persistedBlocks(tl);
  assert.equal(kept[0]!.id, sum.id);
  assert.ok(!kept.some((b) => b.turn_id === 't1'));
});

test('applyBlockUpdates sets hidden flags; unknown ids are an error; a hide turns on suppressPrevTurnCache', () => {
  const tl = createTimeline(turn('t1', { rounds: 1 }));
  const target = tl.blocks[2]!;
  const next = applyBlockUpdates(tl, [{ blockId: target.id, hidden: true, replacement_text: 'R' }], { fromHide: true });
  assert.equal(next.blocks[2]!.hidden, true);
  assert.equal(next.blocks[2]!.replacement_text, 'R');
  assert.equal(next.suppressPrevTurnCache, true);
  assert.equal(tl.blocks[2]!.hidden, undefined, 'previous value untouched');
  assert.throws(() => applyBlockUpdates(tl, [{ blockId: 'nope', hidden: true, replacement_text: '' }]), /no block with id nope/);
});

test('renderTimelineValue returns the timeline with TTL pruning applied (flags + system.message)', () => {
  const blocks = [];
  for (let t = 1; t <= 4; t++) blocks.push(...turn(`t${t}`, { rounds: 1, final: true }));
  blocks.push(...turn('t5', { rounds: 1 }));
  const tl = createTimeline(blocks);
  const ttl = { cacheTtlSeconds: 300, pruneBufferSeconds: 10, keepRecentTurns: 2, keepRecentIntactTurns: 1 };
  const { output, timeline } = renderTimelineValue(tl, { currentTurnId: 't5', systemPrompt: 'S', cacheState: { lastTouchAt: T0 } }, { now: T0 + 3_600_000, ttl });
  assert.equal(output.pruning!.status, 'expired');
  assert.equal(timeline.blocks.length, tl.blocks.length + 1);
  assert.equal(timeline.blocks.at(-1)!.type, 'system.message');
  assert.ok(timeline.blocks.filter((b) => b.hidden).length === output.pruning!.updates.length);
  // re-rendering the pruned value: nothing new to prune, same visible text
  const again = renderTimelineValue(timeline, { currentTurnId: 't5', systemPrompt: 'S', cacheState: { lastTouchAt: T0 } }, { now: T0 + 7_200_000, ttl });
  assert.deepEqual(again.output.pruning!.updates, []);
  assert.deepEqual(again.output.messages, output.messages);
});

test('hidePath: applies flags in the tail (suppressing the previous-turn checkpoint), else contributes the refusal notice', () => {
  const tl = createTimeline([...turn('t1', { rounds: 1, final: true }), ...turn('t2', { rounds: 6 })]);
  const ok = hidePath(tl, paths.toolResult('t2', callId('t2', 6)), { currentTurnId: 't2', ts: iso(T0), noticeKey: 1 });
  assert.ok(ok.result.ok);
  assert.equal(ok.timeline.suppressPrevTurnCache, true);
  assert.equal(ok.timeline.blocks.filter((b) => b.hidden).length, 1);
  const refused = hidePath(tl, paths.toolResult('t2', callId('t2', 1)), { currentTurnId: 't2', ts: iso(T0), noticeKey: 2 });
  assert.ok(!refused.result.ok && refused.result.code === 'hide_before_cache');
  const notice = refused.timeline.blocks.at(-1)!;
  assert.equal(notice.type, 'react.notice');
  assert.equal(JSON.parse(notice.text!).code, 'hide_before_cache');
  assert.equal(refused.timeline.suppressPrevTurnCache, false);
});
