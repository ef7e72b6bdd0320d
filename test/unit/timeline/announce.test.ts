import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { iterationLabel, renderAnnounce } from '../../../core/timeline/announce';
import { paths } from '../../../core/timeline/paths';
import { iso, T0 } from './_render-fixtures';

function plan(id: string, extra: Record<string, unknown> = {}, key = id) {
  const snap = {
    plan_id: id,
    steps: ['collect metrics', 'compare trends'],
    status: {},
    current: true,
    created_ts: iso(T0),
    last_ts: iso(T0),
    origin_turn_id: 't1',
    last_turn_id: 't1',
    ...extra,
  };
  return makeBlock({
    type: 'react.plan',
    author: 'react',
    turn_id: 't1',
    ts: iso(T0),
    key,
    path: paths.plan('t1', id),
    mime: 'application/json',
    text: JSON.stringify(snap),
  });
}

test('iteration label, with and without reactive bonus', () => {
  assert.equal(iterationLabel({ iteration: 3, maxIterations: 15 }), 'Iteration 3/15');
  assert.equal(
    iterationLabel({ iteration: 3, maxIterations: 17, bonusIterations: 2 }),
    'Iteration 3/17 (15 + 2 reactive bonus)',
  );
  assert.equal(
    iterationLabel({ iteration: 1, maxIterations: 16, baseIterations: 15, bonusIterations: 1 }),
    'Iteration 1/16 (15 + 1 reactive bonus)',
  );
  assert.throws(
    () => iterationLabel({ iteration: 1, maxIterations: 16, baseIterations: 15, bonusIterations: 2 }),
    /must equal baseIterations/,
  );
  assert.throws(() => iterationLabel({ iteration: 0, maxIterations: 15 }), /iteration must be an integer >= 1/);
});

test('sections: budget, open plans from the latest snapshots, live events, workspace, announce blocks', () => {
  const blocks = [
    plan('plan_a'),
    plan('plan_a', { status: { '1': 'done' } }, 'plan_a.2'),
    plan('plan_b', { closed_ts: iso(T0), current: false }),
  ];
  const extra = makeBlock({
    type: 'stage.announce',
    author: 'system',
    turn_id: 't1',
    ts: iso(T0),
    text: '[NOTICE] quota low',
  });
  const text = renderAnnounce(
    {
      iteration: 2,
      maxIterations: 15,
      budget: ['tokens: 1200 left', 'time: 40s left'],
      liveEvents: ['steer m2: stop'],
      workspace: ['active: files/app'],
      nowIso: iso(T0),
    },
    blocks,
    [extra],
  );
  assert.equal(
    text,
    [
      `[ANNOUNCE — Iteration 2/15 — now ${iso(T0)}]`,
      '[BUDGET]',
      '  - tokens: 1200 left',
      '  - time: 40s left',
      '[OPEN PLANS]',
      '  - plans: 1 visible',
      '    • plan_id=plan_a (current)',
      '      snapshot_ref=ar:plan.latest:plan_a',
      '      created_turn=t1',
      `      created_ts=${iso(T0)}`,
      '      last_update_turn=t1',
      `      last_update_ts=${iso(T0)}`,
      '      ✓ [1] collect metrics',
      '      □ [2] compare trends',
      '[LIVE TURN EVENTS]',
      '  - steer m2: stop',
      '[WORKSPACE]',
      '  - active: files/app',
      '[NOTICE] quota low',
    ].join('\n'),
  );
});

test('no plans: "plans: none"; no state: only the announce blocks', () => {
  assert.match(renderAnnounce({ iteration: 1, maxIterations: 15 }, []), /\[OPEN PLANS\]\n  - plans: none$/);
  const b = makeBlock({ type: 'stage.announce', author: 'system', turn_id: 't1', ts: iso(T0), text: 'X' });
  assert.equal(renderAnnounce(undefined, [], [b]), '[ANNOUNCE]\nX');
});
