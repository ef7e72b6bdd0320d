import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import {
  advanceExternalCursor,
  blocksForPersist,
  buildTimelinePayload,
  buildTurnLog,
  collectTurnIds,
  compareStreamIds,
  describeTimelinePayload,
  isExternalEventApplied,
  parseTimelinePayload,
  TimelinePayloadSchema,
} from '../../../core/timeline/payload';
import { SourceRowSchema } from '../../../core/timeline/sources';

let n = 0;
function blk(type: string, turn: string, extra: Partial<Block> = {}): Block {
  n++;
  return makeBlock({
    type,
    author: 'react',
    turn_id: turn,
    ts: `2026-04-01T00:00:${String(n).padStart(2, '0')}Z`,
    key: n,
    text: `${type}#${n}`,
    ...extra,
  } as never);
}

const ids = (bs: Block[]) => bs.map((b) => b.type);

test('blocksForPersist: table of trims at the LAST conv.range.summary (inclusive)', () => {
  const cases: Array<[string, string[], string[]]> = [
    [
      'no summary keeps everything',
      ['turn.header', 'user.prompt', 'assistant.completion'],
      ['turn.header', 'user.prompt', 'assistant.completion'],
    ],
    ['empty', [], []],
    ['summary first', ['conv.range.summary', 'user.prompt'], ['conv.range.summary', 'user.prompt']],
    [
      'summary in the middle',
      ['turn.header', 'user.prompt', 'conv.range.summary', 'react.note.preserved', 'user.prompt'],
      ['conv.range.summary', 'react.note.preserved', 'user.prompt'],
    ],
    [
      'two summaries: the last wins',
      ['user.prompt', 'conv.range.summary', 'user.prompt', 'conv.range.summary', 'assistant.completion'],
      ['conv.range.summary', 'assistant.completion'],
    ],
    ['summary last', ['user.prompt', 'conv.range.summary'], ['conv.range.summary']],
    [
      'working summaries do not trim',
      ['user.prompt', 'conv.working.summary', 'assistant.completion'],
      ['user.prompt', 'conv.working.summary', 'assistant.completion'],
    ],
  ];
  for (const [name, input, want] of cases) {
    const blocks = input.map((t) => blk(t, 'turn_1'));
    assert.deepEqual(ids(blocksForPersist(blocks)), want, name);
  }
});

test('collectTurnIds: known first, then first appearance in blocks', () => {
  const blocks = [blk('user.prompt', 'turn_3'), blk('user.prompt', 'turn_4'), blk('user.prompt', 'turn_3')];
  assert.deepEqual(collectTurnIds(blocks, ['turn_1', 'turn_2', 'turn_3']), ['turn_1', 'turn_2', 'turn_3', 'turn_4']);
  assert.deepEqual(collectTurnIds(blocks), ['turn_3', 'turn_4']);
});

test('buildTimelinePayload: trimmed blocks, all turn ids, sorted pool, cursor + cache fields', () => {
  const blocks = [
    blk('turn.header', 'turn_1'),
    blk('user.prompt', 'turn_1'),
    blk('assistant.completion', 'turn_1'),
    blk('conv.range.summary', 'turn_2', { meta: { covered_turn_ids: ['turn_1'] } }),
    blk('turn.header', 'turn_2'),
    blk('user.prompt', 'turn_2'),
  ];
  const p = buildTimelinePayload({
    ts: '2026-04-01T01:00:00Z',
    blocks,
    sourcesPool: [
      SourceRowSchema.parse({ sid: 3, url: 'https://c.com' }),
      SourceRowSchema.parse({ sid: 1, url: 'https://a.com' }),
    ],
    turnIds: ['turn_0'],
    conversationTitle: 'Revenue',
    lastExternalEventId: '17-0',
    lastExternalEventSeq: 4,
    cacheLastTouchAt: 1_780_000_000,
    cacheLastTtlSeconds: 300,
  });
  assert.equal(p.version, 1);
  assert.deepEqual(ids(p.blocks), ['conv.range.summary', 'turn.header', 'user.prompt']);
  assert.deepEqual(p.turn_ids, ['turn_0', 'turn_1', 'turn_2']);
  assert.deepEqual(
    p.sources_pool.map((r) => r.sid),
    [1, 3],
  );
  assert.equal(p.conversation_title, 'Revenue');
  assert.equal(p.conversation_started_at, blocks[0]!.ts);
  assert.equal(p.last_external_event_id, '17-0');
  assert.equal(p.last_external_event_seq, 4);
  assert.equal(p.cache_last_touch_at, 1_780_000_000);
  assert.equal(p.cache_last_ttl_seconds, 300);
  // JSON round trip is stable
  const again = parseTimelinePayload(JSON.parse(JSON.stringify(p)));
  assert.deepEqual(again, p);
  assert.match(
    describeTimelinePayload(p),
    /^conv\.timeline\.v1: 3 blocks, 2 sources, 3 turns \[turn_0, turn_1, turn_2\], title="Revenue"$/,
  );
});

test('buildTimelinePayload defaults: nulls, empty pool, explicit started_at wins', () => {
  const p = buildTimelinePayload({
    ts: 't',
    blocks: [],
    conversationStartedAt: '2026-01-01T00:00:00Z',
    forkedFrom: 'conv_x',
  });
  assert.deepEqual(
    [
      p.blocks,
      p.sources_pool,
      p.turn_ids,
      p.conversation_title,
      p.last_external_event_id,
      p.last_external_event_seq,
      p.cache_last_touch_at,
      p.cache_last_ttl_seconds,
    ],
    [[], [], [], null, null, null, null, null],
  );
  assert.equal(p.conversation_started_at, '2026-01-01T00:00:00Z');
  assert.equal(p.forked_from, 'conv_x');
  const minimal = TimelinePayloadSchema.parse({ version: 1, ts: 't', blocks: [] });
  assert.equal(minimal.cache_last_ttl_seconds, null);
});

test('parseTimelinePayload: readable errors', () => {
  assert.throws(
    () => parseTimelinePayload({ version: 2, ts: 't', blocks: [] }),
    /invalid conv\.timeline\.v1 payload: version/,
  );
  assert.throws(() => parseTimelinePayload({ version: 1, ts: 't', blocks: [{ id: 'x' }] }), /blocks\.0\./);
  assert.throws(
    () => parseTimelinePayload({ version: 1, ts: 't', blocks: [], cache_last_ttl_seconds: -5 }),
    /cache_last_ttl_seconds/,
  );
  const b = blk('user.prompt', 'turn_1');
  assert.throws(() => parseTimelinePayload({ version: 1, ts: 't', blocks: [b, b] }), /duplicate block id/);
  assert.throws(() => parseTimelinePayload('nope'), /invalid conv\.timeline\.v1 payload/);
});

test('external-event cursor: stream ids compare numerically; seq fallback; never moves back', () => {
  assert.equal(compareStreamIds('3-0', '3-0'), 0);
  assert.equal(compareStreamIds('10-0', '9-5'), 1);
  assert.equal(compareStreamIds('9-10', '9-9'), 1);
  assert.equal(compareStreamIds('1700000000000-1', '1700000000000-0'), 1);
  assert.equal(compareStreamIds('5', '5-1'), -1);
  assert.throws(() => compareStreamIds('x-1', '1-0'), /invalid external event stream id/);

  const empty = { last_external_event_id: null, last_external_event_seq: null };
  assert.equal(isExternalEventApplied(empty, { id: '1-0' }), false);
  assert.equal(isExternalEventApplied(empty, { seq: 0 }), false);
  const cur = { last_external_event_id: '9-0', last_external_event_seq: 3 };
  const cases: Array<[{ id?: string; seq?: number }, boolean]> = [
    [{ id: '8-5' }, true],
    [{ id: '9-0' }, true],
    [{ id: '10-0' }, false],
    [{ id: '10-0', seq: 1 }, false],
    [{ seq: 3 }, true],
    [{ seq: 4 }, false],
  ];
  for (const [ev, want] of cases) assert.equal(isExternalEventApplied(cur, ev), want, JSON.stringify(ev));
  assert.throws(() => isExternalEventApplied(cur, {}), /neither a stream id nor a sequence/);

  let c = advanceExternalCursor(empty, { id: '5-0', seq: 2 });
  assert.deepEqual(c, { last_external_event_id: '5-0', last_external_event_seq: 2 });
  c = advanceExternalCursor(c, { id: '4-0', seq: 1 });
  assert.deepEqual(c, { last_external_event_id: '5-0', last_external_event_seq: 2 });
  c = advanceExternalCursor(c, { id: '10-0' });
  assert.deepEqual(c, { last_external_event_id: '10-0', last_external_event_seq: 2 });
});

test('buildTurnLog: only the turn’s blocks, final announce, sorted unique SIDs', () => {
  const blocks = [blk('user.prompt', 'turn_1'), blk('user.prompt', 'turn_2'), blk('assistant.completion', 'turn_2')];
  const log = buildTurnLog({
    turnId: 'turn_2',
    ts: 'now',
    blocks,
    announce: 'ANNOUNCE — Iteration 3/15',
    sourcesUsed: [3, 1, 3],
  });
  assert.deepEqual(ids(log.blocks), ['user.prompt', 'assistant.completion']);
  assert.ok(log.blocks.every((b) => b.turn_id === 'turn_2'));
  assert.equal(log.announce, 'ANNOUNCE — Iteration 3/15');
  assert.deepEqual(log.sources_used, [1, 3]);
  assert.equal(buildTurnLog({ turnId: 'turn_9', ts: 'now', blocks }).announce, null);
  assert.throws(
    () => buildTurnLog({ turnId: 'turn_2', ts: 'now', blocks, sourcesUsed: [0] }),
    /invalid turn\.log for turn_2: sources_used/,
  );
});
