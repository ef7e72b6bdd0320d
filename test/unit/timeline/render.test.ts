import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import type { ContentPart } from '../../../core/model/provider';
import {
  EMPTY_ROUND_HINT,
  ROUND_CLOSE,
  renderTimeline,
  roundOpen,
  visibleItems,
  type RenderInput,
  type RenderOutput,
} from '../../../core/timeline/render';
import { paths } from '../../../core/timeline/paths';
import { conversation, iso, T0, turn } from './_render-fixtures';
import { PromptCache } from '../../emulator/prompt-cache';

function input(blocks: Block[], currentTurnId: string, extra: Partial<RenderInput> = {}): RenderInput {
  return {
    blocks,
    currentTurnId,
    systemPrompt: 'You are the agent.',
    sources: [{ sid: 1, title: 'Example', url: 'https://example.com/' }],
    announce: { iteration: 3, maxIterations: 15 },
    ...extra,
  };
}

function parts(out: RenderOutput): ContentPart[] {
  return out.messages.flatMap((m) => m.content);
}

function textOf(p: ContentPart | undefined): string {
  assert.ok(p && p.type === 'text', 'expected a text part');
  return p.text;
}

function countFlags(out: RenderOutput): number {
  return out.system.filter((s) => s.cache).length + parts(out).filter((p) => p.cache).length;
}

test('order: timeline, then SOURCES POOL, then ANNOUNCE; neither tail block carries a checkpoint', () => {
  const out = renderTimeline(input([...turn('t1', { rounds: 2, final: true }), ...turn('t2', { rounds: 5 })], 't2'), {
    now: T0,
  });
  const ps = parts(out);
  assert.match(textOf(ps.at(-2)), /^\[SOURCES POOL\]/);
  assert.match(textOf(ps.at(-1)), /^\[ANNOUNCE — Iteration 3\/15\]/);
  assert.equal(ps.at(-1)!.cache, undefined);
  assert.equal(ps.at(-2)!.cache, undefined);
  // the last checkpoint (tail) is the part right before SOURCES POOL
  assert.equal(ps.at(-3)!.cache, true);
  assert.deepEqual(
    out.checkpoints.map((c) => c.kind),
    ['previous_turn', 'pre_tail', 'tail'],
  );
  assert.equal(out.breakpoints, 4);
  assert.equal(countFlags(out), 4);
  assert.deepEqual(out.system, [{ text: 'You are the agent.', cache: true }]);
});

test('anthropic shape: one user message, no empty text parts, flags only on checkpoint blocks', () => {
  const out = renderTimeline(input(conversation(4, 3), 'turn_4'), { now: T0 });
  assert.equal(out.messages.length, 1);
  assert.equal(out.messages[0]!.role, 'user');
  for (const p of parts(out)) if (p.type === 'text') assert.ok(p.text.length > 0);
  const flagged = parts(out).filter((p) => p.cache).length;
  assert.equal(flagged, out.checkpoints.length);
});

test('never more than 4 breakpoints, across many shapes', () => {
  for (let turns = 1; turns <= 5; turns++) {
    for (let r = 0; r <= 6; r++) {
      const out = renderTimeline(input(conversation(turns, r), `turn_${turns}`), {
        now: T0,
        cacheOffsetRounds: 1 + (r % 3),
        cacheMinRounds: r % 4,
      });
      assert.ok(out.breakpoints <= 4, `breakpoints ${out.breakpoints}`);
      assert.equal(countFlags(out), out.breakpoints);
      assert.ok(out.checkpoints.length >= 1 && out.checkpoints.length <= 3);
    }
  }
  const noSystem = renderTimeline(input(conversation(3, 3), 'turn_3', { systemPrompt: '' }), { now: T0 });
  assert.deepEqual(noSystem.system, []);
  assert.equal(noSystem.breakpoints, noSystem.checkpoints.length);
});

test('checkpoint blockIndex / blockId point at the input blocks', () => {
  const blocks = [...turn('t1', { rounds: 1, final: true }), ...turn('t2', { rounds: 6 })];
  const out = renderTimeline(input(blocks, 't2'), { now: T0, cacheOffsetRounds: 4 });
  assert.deepEqual(
    out.checkpoints.map((c) => c.blockIndex),
    [4, 10, 18],
  );
  for (const c of out.checkpoints) assert.equal(blocks[c.blockIndex]!.id, c.blockId);
});

test('turn headers and current-turn round framing, with the empty-round hint on an open round', () => {
  const blocks = [
    ...turn('t1', { rounds: 1, final: true }),
    ...turn('t2', { rounds: 3, roundStart: true, openRound: true }),
  ];
  const out = renderTimeline(input(blocks, 't2'), { now: T0, debug: true });
  const text = out.debugText!;
  assert.match(text, new RegExp(`━{38}\nTURN t2 \\(started at ${iso(T0).replace(/\./g, '\\.')}\\)\n━{38}`));
  assert.ok(text.includes(roundOpen(1)) && text.includes(roundOpen(2)) && text.includes(roundOpen(3)));
  assert.ok(!text.includes(roundOpen(4)));
  // prior turns are not framed
  assert.equal(text.split('ROUND 1 ').length - 1, 1);
  assert.equal(text.split(ROUND_CLOSE).length - 1, 3);
  assert.equal(text.split(EMPTY_ROUND_HINT).length - 1, 1);
  const hintAt = text.indexOf(EMPTY_ROUND_HINT);
  assert.ok(hintAt > text.indexOf(roundOpen(3)));
  // the open round sits after the tail checkpoint
  assert.ok(text.lastIndexOf('=>[') < text.indexOf(roundOpen(3)));
});

test('debug render marks checkpoints =>[n] in order', () => {
  const out = renderTimeline(input(conversation(2, 4), 'turn_2'), { now: T0, debug: true });
  const marks = [...out.debugText!.matchAll(/=>\[(\d)\]/g)].map((m) => m[1]);
  assert.deepEqual(marks, ['1', '2', '3']);
  assert.ok(out.debugText!.indexOf('=>[3]') < out.debugText!.indexOf('[SOURCES POOL]'));
  assert.equal(renderTimeline(input(conversation(2, 4), 'turn_2'), { now: T0 }).debugText, undefined);
});

test('skipped blocks (react.plan, plan_closed notices) are never rendered and never hold a checkpoint', () => {
  const blocks = turn('t1', { rounds: 2 });
  const last = blocks[blocks.length - 1]!;
  const plan = makeBlock({
    type: 'react.plan',
    author: 'react',
    turn_id: 't1',
    ts: iso(T0),
    call_id: last.call_id,
    path: paths.plan('t1', 'plan_a'),
    mime: 'application/json',
    text: JSON.stringify({
      plan_id: 'plan_a',
      steps: ['collect', 'compare'],
      status: { '1': 'done' },
      current: true,
      created_ts: iso(T0),
      last_ts: iso(T0),
      origin_turn_id: 't1',
      last_turn_id: 't1',
    }),
  });
  const notice = makeBlock({
    type: 'react.notice',
    author: 'react',
    turn_id: 't1',
    ts: iso(T0),
    key: 'n1',
    call_id: last.call_id,
    text: JSON.stringify({ code: 'plan_closed', message: 'closed' }),
  });
  const out = renderTimeline(input([...blocks, plan, notice], 't1'), { now: T0, debug: true });
  const tail = out.checkpoints.at(-1)!;
  assert.equal(tail.blockId, last.id);
  assert.ok(!out.debugText!.includes('"plan_id"'));
  assert.ok(!out.debugText!.includes('plan_closed'));
  // ...but the plan shows in ANNOUNCE
  assert.match(
    out.debugText!,
    /\[OPEN PLANS\][\s\S]*plan_id=plan_a \(current\)[\s\S]*✓ \[1\] collect[\s\S]*□ \[2\] compare/,
  );
});

test('the cache flag goes on the last emitted part of the checkpoint block (image attachment)', () => {
  const ts = iso(T0);
  const blocks = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: 't1', ts }),
    makeBlock({ type: 'user.prompt', author: 'user', turn_id: 't1', ts, path: paths.userPrompt('t1'), text: 'look' }),
    makeBlock({
      type: 'user.attachment',
      author: 'user',
      turn_id: 't1',
      ts,
      path: paths.userAttachment('t1', 'a.png'),
      mime: 'image/png',
      base64: 'iVBORw0KGgo=',
    }),
  ];
  const out = renderTimeline(input(blocks, 't1'), { now: T0 });
  const ps = parts(out);
  const img = ps.findIndex((p) => p.type === 'image');
  assert.ok(img > 0);
  assert.equal(ps[img]!.cache, true);
  assert.equal(ps[img - 1]!.cache, undefined);
  assert.match(textOf(ps[img - 1]), /^\[USER ATTACHMENT\] fi:t1\.user\.attachments\/a\.png/);
});

test('hidden blocks render their replacement; an empty replacement drops the block; default placeholder keeps a handle', () => {
  const blocks = turn('t1', { rounds: 2 });
  const r1 = blocks.findIndex((b) => b.type === 'react.tool.result');
  const c2 = blocks.findIndex((b, i) => i > r1 && b.type === 'react.tool.call');
  blocks[r1] = { ...blocks[r1]!, hidden: true, replacement_text: 'short version (retrieve back with react.read(...))' };
  blocks[c2] = { ...blocks[c2]!, hidden: true, replacement_text: '' };
  const r2 = blocks.length - 1;
  blocks[r2] = { ...blocks[r2]!, hidden: true };
  const out = renderTimeline(input(blocks, 't1'), { now: T0, debug: true });
  const text = out.debugText!;
  assert.ok(text.includes('short version'));
  assert.ok(!text.includes('"q":"q2"'));
  assert.ok(text.includes(`[HIDDEN] retrieve back with react.read(paths=["${blocks[r2]!.path}"])`));
});

test('older turns are truncated (400-char tool results) with a recovery handle; the current turn is not', () => {
  const big = (r: number) => JSON.stringify({ r, body: 'y'.repeat(2000) });
  const blocks = [
    ...turn('t1', { rounds: 1, final: true, resultText: big }),
    ...turn('t2', { rounds: 1, resultText: big }),
  ];
  const out = renderTimeline(input(blocks, 't2'), { now: T0, debug: true });
  const items = visibleItems(blocks, 't2');
  const old = items.find((it) => it.block.turn_id === 't1' && it.block.type === 'react.tool.result')!;
  assert.match(old.text, /…\[truncated: showing 400 of \d+ chars; full result: react\.read\(paths=\["tc:t1\./);
  const cur = items.find((it) => it.block.turn_id === 't2' && it.block.type === 'react.tool.result')!;
  assert.ok(cur.text.includes('y'.repeat(2000)));
  assert.ok(out.debugText!.includes('y'.repeat(2000)));
});

test('large current-turn tool results render as a bounded preview; the stored block is untouched', () => {
  const huge = (r: number) =>
    JSON.stringify({ items: Array.from({ length: 800 }, (_, i) => ({ id: i, title: `row ${i}`, r })) });
  const blocks = turn('t1', { rounds: 1, resultText: huge });
  const before = blocks[blocks.length - 1]!.text!;
  const out = renderTimeline(input(blocks, 't1'), { now: T0, debug: true });
  assert.match(out.debugText!, /\[LARGE TOOL RESULT — PREVIEW\]/);
  assert.match(
    out.debugText!,
    /shape \(depth 3\): json \{"items": array\[800\] of \{"id": number, "title": string, "r": number\}\}/,
  );
  assert.ok(out.debugText!.length < before.length);
  assert.equal(blocks[blocks.length - 1]!.text, before);
});

test('render starts at the last compaction summary and inserts a synthetic header mid-turn', () => {
  const t1 = turn('t1', { rounds: 2, final: true });
  const t2 = turn('t2', { rounds: 3 });
  const summary = makeBlock({
    type: 'conv.range.summary',
    author: 'system',
    turn_id: 't2',
    ts: iso(T0),
    path: paths.rangeSummary('t2'),
    text: 'Earlier: the user asked about X.',
    meta: { covered_turn_ids: ['t1'] },
  });
  // summary cut inside t2, after its prompt
  const blocks = [...t1, ...t2.slice(0, 2), summary, ...t2.slice(2)];
  const out = renderTimeline(input(blocks, 't2'), { now: T0, debug: true });
  const text = out.debugText!;
  assert.ok(!text.includes('question of t1'));
  assert.ok(!text.includes('question of t2'));
  assert.match(text, /^\[SYSTEM\][\s\S]*?\n\n\[COMPACTED PRIOR CONVERSATION MEMORY\]\ncovered_turns: t1\nEarlier/);
  // the synthetic header makes the summary the "previous turn" checkpoint
  assert.match(text, /\[END COMPACTED PRIOR CONVERSATION MEMORY\]\n=>\[1\]\n\n━{38}\nTURN t2/);
  assert.equal(out.checkpoints[0]!.kind, 'previous_turn');
  assert.equal(out.checkpoints[0]!.blockId, summary.id);
  assert.equal(out.checkpoints.at(-1)!.blockId, blocks.at(-1)!.id);
});

test('announce blocks and live state render in ANNOUNCE, after SOURCES POOL; includeSources=false drops the pool', () => {
  const blocks = turn('t1', { rounds: 1 });
  const ann = makeBlock({
    type: 'stage.announce',
    author: 'system',
    turn_id: 't1',
    ts: iso(T0),
    text: '[ACTIVE STATE] ok',
  });
  const out = renderTimeline(
    input(blocks, 't1', {
      announceBlocks: [ann],
      announce: {
        iteration: 2,
        maxIterations: 16,
        bonusIterations: 1,
        budget: 'tokens left: 1200',
        liveEvents: ['followup m1: also check Y'],
        workspace: ['scope: files/app'],
      },
    }),
    { now: T0, includeSources: false },
  );
  const last = textOf(parts(out).at(-1));
  assert.match(last, /^\[ANNOUNCE — Iteration 2\/16 \(15 \+ 1 reactive bonus\)\]/);
  assert.match(last, /\[BUDGET\]\n  - tokens left: 1200/);
  assert.match(last, /\[LIVE TURN EVENTS\]\n  - followup m1: also check Y/);
  assert.match(last, /\[WORKSPACE\]\n  - scope: files\/app/);
  assert.match(last, /\[ACTIVE STATE\] ok$/);
  assert.ok(!parts(out).some((p) => p.type === 'text' && p.text.startsWith('[SOURCES POOL]')));
});

test('bad input is rejected with a readable error', () => {
  assert.throws(() => renderTimeline(input([], 't1'), { now: Number.NaN }), /config\.now/);
  assert.throws(() => renderTimeline(input([], ''), { now: T0 }), /currentTurnId/);
  assert.throws(
    () => renderTimeline(input([], 't1'), { now: T0, truncation: { toolResultChars: 0 } }),
    /toolResultChars/,
  );
});

test('prompt-cache emulator: every later round of a turn reads the stable prefix from cache', () => {
  let clock = T0;
  const cache = new PromptCache({ minCacheableTokens: 1, now: () => clock });
  const cc = { type: 'ephemeral' };
  const body = (out: RenderOutput) => ({
    model: 'm',
    system: out.system.map((s) => ({ type: 'text', text: s.text, ...(s.cache ? { cache_control: cc } : {}) })),
    messages: out.messages.map((m) => ({
      role: m.role,
      content: m.content.map((p) => {
        const extra = p.cache ? { cache_control: cc } : {};
        if (p.type === 'text') return { type: 'text', text: p.text, ...extra };
        if (p.type === 'image')
          return { type: 'image', source: { type: 'base64', media_type: p.mime, data: p.base64 }, ...extra };
        throw new Error(`unexpected part ${p.type}`);
      }),
    })),
  });
  const prior = [
    ...turn('t1', { rounds: 3, final: true, roundStart: true }),
    ...turn('t2', { rounds: 2, final: true, roundStart: true }),
  ];
  let lastCached = 0;
  for (let k = 1; k <= 8; k++) {
    // decision k renders with rounds 1..k-1 complete and round k just started
    const blocks = [
      ...prior,
      ...turn('t3', { rounds: k, roundStart: true, openRound: true, resultText: (r) => `result ${r} `.repeat(40) }),
    ];
    clock += 20_000;
    const acct = cache.account(body(renderTimeline(input(blocks, 't3'), { now: clock })));
    assert.ok(acct.breakpoints <= 4);
    // the whole prefix cached by the previous decision (up to its tail checkpoint) is read back
    if (k > 1) assert.equal(acct.cacheReadTokens, lastCached, `round ${k}`);
    assert.ok(acct.cacheWriteTokens > 0);
    lastCached = acct.cacheReadTokens + acct.cacheWriteTokens;
  }
});
