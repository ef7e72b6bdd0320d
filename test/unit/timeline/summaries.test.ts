import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { resolvePath } from '../../../core/timeline/path-resolve';
import { paths } from '../../../core/timeline/paths';
import {
  buildTurnIndex,
  extractRefs,
  latestWorkingSummaries,
  latestWorkingSummary,
  parseWorkingSummary,
  renderTurnIndex,
  workingSummaryBlock,
  workingSummaryBlocks,
} from '../../../core/timeline/summaries';

const T1 = 'turn_1';
const T2 = 'turn_2';
const TC = 'tc_aaaaaaaaaaaa';
const TC2 = 'tc_bbbbbbbbbbbb';
let n = 0;
const ts = () => `2026-02-01T00:00:${String(++n).padStart(2, '0')}Z`;
function blk(type: string, turn: string, extra: Partial<Block> = {}): Block {
  return makeBlock({ type, author: 'react', turn_id: turn, ts: ts(), key: `k${n}`, ...extra } as never);
}

const SUMMARY = `Goal: compare Q1 revenue across regions
Outcome: **EMEA grew 12%**, APAC flat
Key facts:
- EMEA +12% [[S:2]]
- APAC 0%
Refs:
- \`fi:turn_1.outputs/report.md\`
- tc:turn_1.${TC}.result, so:sources_pool[1-2].
Retrieval anchors:
* revenue, regions, Q1`;

test('workingSummaryBlock numbers attempts per turn; the unsuffixed ws: path is the latest', () => {
  const blocks: Block[] = [];
  blocks.push(workingSummaryBlock(blocks, { turnId: T1, ts: ts(), text: 'first' }));
  blocks.push(workingSummaryBlock(blocks, { turnId: T2, ts: ts(), text: 'other turn' }));
  blocks.push(workingSummaryBlock(blocks, { turnId: T1, ts: ts(), text: `  ${SUMMARY}  `, meta: { origin: 'final' } }));
  assert.deepEqual(
    blocks.map((b) => b.path),
    [paths.workingSummary(T1, 1), paths.workingSummary(T2, 1), paths.workingSummary(T1, 2)],
  );
  assert.equal(blocks[2]!.meta['attempt'], 2);
  assert.equal(blocks[2]!.meta['origin'], 'final');
  assert.equal(blocks[2]!.text, SUMMARY);
  assert.equal(new Set(blocks.map((b) => b.id)).size, 3);
  assert.equal(workingSummaryBlocks(blocks, T1).length, 2);
  assert.equal(latestWorkingSummary(blocks, T1)?.text, SUMMARY);
  assert.equal(latestWorkingSummary(blocks, 'turn_x'), undefined);
  assert.deepEqual(
    latestWorkingSummaries(blocks).map((b) => b.text),
    [SUMMARY, 'other turn'],
  );
  const r = resolvePath(blocks, `ws:${T1}.conv.working.summary`);
  assert.equal(r.source === 'timeline' && r.blocks[0]!.text, SUMMARY);
  assert.throws(() => workingSummaryBlock(blocks, { turnId: T1, ts: ts(), text: '   ' }), /empty/);
});

test('parseWorkingSummary: sections, bullets, refs', () => {
  const s = parseWorkingSummary(SUMMARY);
  assert.equal(s.goal, 'compare Q1 revenue across regions');
  assert.equal(s.outcome, '**EMEA grew 12%**, APAC flat');
  assert.deepEqual(s.facts, ['EMEA +12% [[S:2]]', 'APAC 0%']);
  assert.deepEqual(s.refs, ['fi:turn_1.outputs/report.md', `tc:turn_1.${TC}.result`, 'so:sources_pool[1-2]']);
  assert.deepEqual(s.anchors, ['revenue, regions, Q1']);
  assert.deepEqual(s.other, []);
  const loose = parseWorkingSummary('just prose\n## Goal: g\n**Refs:** ar:turn_3.user.prompt');
  assert.deepEqual(loose.other, ['just prose']);
  assert.equal(loose.goal, 'g');
  assert.deepEqual(loose.refs, ['ar:turn_3.user.prompt']);
});

test('extractRefs finds logical paths in prose', () => {
  assert.deepEqual(
    extractRefs('see `fi:turn_1.files/a b` and (ar:turn_1.user.prompt), ws:turn_2.conv.working.summary.'),
    ['fi:turn_1.files/a', 'ar:turn_1.user.prompt', 'ws:turn_2.conv.working.summary'],
  );
  assert.deepEqual(extractRefs('no refs here: http://x'), []);
  assert.deepEqual(extractRefs('read so:sources_pool[3, 5-6] now'), ['so:sources_pool[3, 5-6]']);
});

function turnBlocks(): Block[] {
  return [
    blk('turn.header', T1),
    blk('user.prompt', T1, { path: paths.userPrompt(T1), text: 'Compare  Q1\nrevenue please' }),
    blk('user.attachment', T1, { path: paths.userAttachment(T1, 'chart.png'), base64: 'AAAA', mime: 'image/png' }),
    blk('react.round.start', T1, { path: paths.roundStart(T1, TC), text: 'thinking' }),
    blk('react.tool.call', T1, {
      path: paths.toolCall(T1, TC),
      call_id: TC,
      mime: 'application/json',
      text: JSON.stringify({ tool_id: 'web_tools.web_search', tool_call_id: TC, params: { q: 'q1' } }),
    }),
    blk('react.tool.result', T1, {
      path: paths.toolResult(T1, TC),
      call_id: TC,
      text: '5 results',
      meta: { sources_used: [1, 2] },
    }),
    blk('react.tool.call', T1, {
      path: paths.toolCall(T1, TC2),
      call_id: TC2,
      text: '{}',
      meta: { tool_id: 'react.write' },
    }),
    blk('react.tool.result', T1, {
      path: paths.toolResult(T1, TC2),
      call_id: TC2,
      text: 'wrote fi:turn_1.outputs/report.md',
    }),
    blk('react.tool.result', T1, { path: paths.outputs(T1, 'report.md'), call_id: TC2, text: '# Report' }),
    blk('react.plan', T1, { path: paths.plan(T1, 'p1'), text: '{}', meta: { plan_id: 'p1' } }),
    blk('react.plan', T1, { path: paths.plan(T1, 'p1'), text: '{}', meta: { plan_id: 'p1' } }),
    blk('assistant.completion', T1, { path: paths.completion(T1), text: 'Draft [[S:3]]' }),
    blk('user.followup', T1, { path: paths.external(T1, 'followup', 'm1'), text: 'also APAC?' }),
    blk('assistant.completion', T1, { path: paths.completion(T1), text: 'EMEA grew [[S:2, 4-5]]' }),
    blk('conv.working.summary', T1, { path: paths.workingSummary(T1, 1), text: 'old' }),
    blk('conv.working.summary', T1, { path: paths.workingSummary(T1, 2), text: SUMMARY }),
    blk('turn.header', T2),
    blk('user.prompt', T2, { path: paths.userPrompt(T2), text: 'next' }),
  ];
}

test('buildTurnIndex reconstructs summaries, messages, events, tools, artifacts, plans, sources', () => {
  const idx = buildTurnIndex(turnBlocks(), T1);
  assert.equal(idx.path, `ar:${T1}.react.turn.index`);
  assert.ok(idx.started_at && idx.ended_at && idx.started_at < idx.ended_at);
  assert.deepEqual(
    idx.summaries.map((e) => e.path),
    [`ws:${T1}.conv.working.summary`],
  );
  assert.match(idx.summaries[0]!.hint, /^Goal: compare Q1/);
  assert.deepEqual(
    idx.messages.map((e) => e.path),
    [`ar:${T1}.user.prompt`, `ar:${T1}.assistant.completion.1`, `ar:${T1}.assistant.completion`],
  );
  assert.equal(idx.messages[0]!.hint, 'Compare Q1 revenue please');
  assert.deepEqual(
    idx.events.map((e) => e.path),
    [`ar:${T1}.external.followup.m1`],
  );
  assert.deepEqual(
    idx.tools.map((t) => [t.call_id, t.tool_id, t.path, t.result_path]),
    [
      [TC, 'web_tools.web_search', `tc:${T1}.${TC}.call`, `tc:${T1}.${TC}.result`],
      [TC2, 'react.write', `tc:${T1}.${TC2}.call`, `tc:${T1}.${TC2}.result`],
    ],
  );
  assert.equal(idx.tools[0]!.hint, 'web_tools.web_search: 5 results');
  assert.deepEqual(
    idx.artifacts.map((a) => a.path),
    [`fi:${T1}.user.attachments/chart.png`, `fi:${T1}.outputs/report.md`],
  );
  assert.equal(idx.artifacts[0]!.hint, '[binary image/png]');
  assert.deepEqual(
    idx.plans.map((p) => p.path),
    ['ar:plan.latest:p1'],
  );
  assert.deepEqual(idx.sources, [1, 2, 3, 4, 5]);
  // the index's own entries all resolve back to blocks
  const blocks = turnBlocks();
  for (const e of [...idx.messages, ...idx.summaries, ...idx.events, ...idx.tools]) {
    const r = resolvePath(blocks, e.path);
    assert.ok(r.source === 'timeline' && r.blocks.length > 0, e.path);
  }
});

test('renderTurnIndex text and empty turns', () => {
  const text = renderTurnIndex(buildTurnIndex(turnBlocks(), T1));
  assert.match(text, /^\[TURN INDEX\] turn_1\npath: ar:turn_1\.react\.turn\.index\n/);
  assert.match(text, /\nmessages:\n {2}- ar:turn_1\.user\.prompt hint="Compare Q1 revenue please"/);
  assert.match(text, /\ntools:\n {2}- tc:turn_1\.tc_aaaaaaaaaaaa\.call hint="web_tools\.web_search: 5 results"/);
  assert.match(text, /\nsources: so:sources_pool\[1-5\]$/);
  const empty = buildTurnIndex(turnBlocks(), 'turn_404');
  assert.deepEqual([empty.messages, empty.tools, empty.sources], [[], [], []]);
  assert.match(renderTurnIndex(empty), /no blocks recorded/);
});

test('buildTurnIndex uses replacement text of hidden blocks for hints and clips long hints', () => {
  const blocks = [
    blk('user.prompt', T1, {
      path: paths.userPrompt(T1),
      text: 'secret original',
      hidden: true,
      replacement_text: '[hidden: prompt]',
    }),
    blk('assistant.completion', T1, { path: paths.completion(T1), text: 'x'.repeat(500) }),
  ];
  const idx = buildTurnIndex(blocks, T1);
  assert.equal(idx.messages[0]!.hint, '[hidden: prompt]');
  assert.equal(idx.messages[1]!.hint.length, 120);
  assert.ok(idx.messages[1]!.hint.endsWith('…'));
});
