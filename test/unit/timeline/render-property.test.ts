import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeBlock, type Block } from '../../../core/timeline/block';
import type { ContentPart } from '../../../core/model/provider';
import { renderTimeline, type RenderConfig, type RenderInput } from '../../../core/timeline/render';
import { paths } from '../../../core/timeline/paths';
import { iso, T0, turn } from './_render-fixtures';

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

const turnSpec = fc.record({
  rounds: fc.integer({ min: 0, max: 5 }),
  final: fc.boolean(),
  roundStart: fc.boolean(),
  openRound: fc.boolean(),
  resultSize: fc.constantFrom(10, 500, 13_000),
  hideEvery: fc.integer({ min: 0, max: 7 }),
});

const scenario = fc.record({
  turns: fc.array(turnSpec, { minLength: 1, maxLength: 6 }),
  summaryAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
  withPlan: fc.boolean(),
  withImage: fc.boolean(),
  offset: fc.integer({ min: 0, max: 5 }),
  minRounds: fc.integer({ min: 0, max: 5 }),
  ttl: fc.option(
    fc.record({
      cacheTtlSeconds: fc.integer({ min: 1, max: 600 }),
      pruneBufferSeconds: fc.integer({ min: 0, max: 30 }),
      keepRecentTurns: fc.integer({ min: 0, max: 4 }),
      keepRecentIntactTurns: fc.integer({ min: 0, max: 2 }),
    }),
    { nil: undefined },
  ),
  lastTouch: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
  elapsed: fc.integer({ min: 0, max: 1_000_000 }),
  suppress: fc.boolean(),
  debug: fc.boolean(),
  systemPrompt: fc.constantFrom('', 'SYSTEM'),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

function build(s: Scenario): { input: RenderInput; config: RenderConfig } {
  const blocks: Block[] = [];
  s.turns.forEach((spec, i) => {
    const id = `t${i + 1}`;
    const last = i === s.turns.length - 1;
    const bs = turn(id, {
      rounds: spec.rounds,
      final: spec.final && !last,
      roundStart: spec.roundStart,
      openRound: last && spec.openRound && spec.rounds > 0,
      ts: T0 + i * 60_000,
      resultText: (r) => JSON.stringify({ r, body: 'x'.repeat(spec.resultSize) }),
    });
    bs.forEach((b, k) => {
      if (spec.hideEvery > 0 && k % spec.hideEvery === spec.hideEvery - 1 && b.type !== 'turn.header') {
        bs[k] = { ...b, hidden: true, replacement_text: k % 2 ? '' : `hidden ${b.path ?? ''}` };
      }
    });
    blocks.push(...bs);
  });
  const cur = `t${s.turns.length}`;
  if (s.withPlan) {
    const snap = {
      plan_id: 'plan_p',
      steps: ['a', 'b'],
      status: { '1': 'done' },
      current: true,
      created_ts: iso(T0),
      last_ts: iso(T0),
      origin_turn_id: cur,
      last_turn_id: cur,
    };
    blocks.push(
      makeBlock({
        type: 'react.plan',
        author: 'react',
        turn_id: cur,
        ts: iso(T0),
        path: paths.plan(cur, 'plan_p'),
        mime: 'application/json',
        text: JSON.stringify(snap),
      }),
    );
  }
  if (s.withImage) {
    blocks.push(
      makeBlock({
        type: 'user.attachment',
        author: 'user',
        turn_id: cur,
        ts: iso(T0),
        path: paths.userAttachment(cur, 'a.png'),
        mime: 'image/png',
        base64: 'iVBORw0KGgo=',
      }),
    );
  }
  if (s.summaryAt !== undefined && blocks.length > 0) {
    const at = s.summaryAt % blocks.length;
    const tid = blocks[at]!.turn_id;
    blocks.splice(
      at,
      0,
      makeBlock({
        type: 'conv.range.summary',
        author: 'system',
        turn_id: tid,
        ts: iso(T0),
        path: paths.rangeSummary(tid),
        text: 'summary',
        meta: { covered_turn_ids: ['t0'] },
      }),
    );
  }
  const now = T0 + (s.lastTouch ?? 0) + s.elapsed;
  return {
    input: {
      blocks,
      currentTurnId: cur,
      systemPrompt: s.systemPrompt,
      sources: [
        { sid: 2, title: 'B', url: 'https://b.example/' },
        { sid: 1, title: 'A', url: 'https://a.example/' },
      ],
      announce: { iteration: 1, maxIterations: 15 },
      cacheState: { lastTouchAt: s.lastTouch === null ? null : T0 + s.lastTouch },
    },
    config: {
      now,
      cacheOffsetRounds: s.offset,
      cacheMinRounds: s.minRounds,
      ttl: s.ttl,
      suppressPrevTurnCache: s.suppress,
      debug: s.debug,
    },
  };
}

test('render is a pure function of (blocks, config, now): same inputs → deep-equal output, input not mutated', () => {
  fc.assert(
    fc.property(scenario, (s) => {
      const a = build(s);
      const b = build(s);
      const before = structuredClone(a.input);
      deepFreeze(a.input);
      deepFreeze(a.config);
      const out1 = renderTimeline(a.input, a.config);
      const out2 = renderTimeline(a.input, a.config);
      const out3 = renderTimeline(b.input, b.config);
      assert.deepEqual(out1, out2);
      assert.deepEqual(out1, out3);
      assert.deepEqual(a.input, before);
    }),
    { numRuns: 200 },
  );
});

test('every render: at most 4 breakpoints, flags = breakpoints, the SOURCES POOL / ANNOUNCE tail is never cached', () => {
  fc.assert(
    fc.property(scenario, (s) => {
      const { input, config } = build(s);
      const out = renderTimeline(input, config);
      const parts = out.messages.flatMap((m) => m.content);
      const flags = out.system.filter((x) => x.cache).length + parts.filter((p) => p.cache).length;
      assert.ok(out.breakpoints <= 4);
      assert.equal(flags, out.breakpoints);
      assert.ok(out.checkpoints.length <= 3);
      const tail = parts.slice(-2);
      assert.ok(tail[0]!.type === 'text' && tail[0]!.text.startsWith('[SOURCES POOL]'));
      assert.ok(tail[1]!.type === 'text' && tail[1]!.text.startsWith('[ANNOUNCE'));
      for (const p of tail) assert.equal(p.cache, undefined);
      for (const p of parts) if (p.type === 'text') assert.ok(p.text.length > 0);
      const idx = out.checkpoints.map((c) => c.blockIndex).filter((i) => i >= 0);
      assert.deepEqual(
        idx,
        [...idx].sort((x, y) => x - y),
      );
    }),
    { numRuns: 200 },
  );
});

test('stable prefix: after a new round is appended, everything up to the previous tail checkpoint renders identically', () => {
  const strip = (p: ContentPart): ContentPart => {
    const { cache: _c, ...rest } = p;
    return rest as ContentPart;
  };
  fc.assert(
    fc.property(scenario, (s) => {
      const { input, config } = build({ ...s, ttl: undefined });
      const first = renderTimeline(input, config);
      const firstParts = first.messages.flatMap((m) => m.content);
      const tailPart = firstParts.map((p) => p.cache === true).lastIndexOf(true);
      if (tailPart < 0) return;
      const cur = input.currentTurnId;
      const id = 'tc_fedcba987654';
      const ts = iso(T0);
      const next = [
        ...input.blocks,
        makeBlock({
          type: 'react.round.start',
          author: 'react',
          turn_id: cur,
          ts,
          call_id: id,
          path: paths.roundStart(cur, id),
          text: 'thinking',
        }),
        makeBlock({
          type: 'react.tool.call',
          author: 'react',
          turn_id: cur,
          ts,
          call_id: id,
          path: paths.toolCall(cur, id),
          text: '{"tool_id":"x"}',
        }),
        makeBlock({
          type: 'react.tool.result',
          author: 'tool',
          turn_id: cur,
          ts,
          call_id: id,
          path: paths.toolResult(cur, id),
          text: 'new result',
        }),
      ];
      const second = renderTimeline({ ...input, blocks: next }, config);
      const secondParts = second.messages.flatMap((m) => m.content);
      assert.deepEqual(secondParts.slice(0, tailPart + 1).map(strip), firstParts.slice(0, tailPart + 1).map(strip));
      assert.deepEqual(second.system, first.system);
    }),
    { numRuns: 200 },
  );
});
