import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import {
  applyAcks,
  applyPlanCommand,
  currentOpenPlan,
  isPlanComplete,
  isPlanOpen,
  latestPlanSnapshots,
  newPlanId,
  parseAckLines,
  parsePlanBlock,
  renderOpenPlans,
  renderPlanHistory,
  type PlanCommand,
  type PlanSnapshot,
} from '../../../core/timeline/plans';
import { resolvePath } from '../../../core/timeline/path-resolve';

// ---------------------------------------------------------------------------------------------
// Ack parsing
// ---------------------------------------------------------------------------------------------

const ACK_CASES: Array<[string, Array<[string, number]>]> = [
  ['✓ [1] done it', [['done', 1]]],
  ['✓ 1 done it', [['done', 1]]],
  ['✓ 1. done it', [['done', 1]]],
  ['✓ [2]: ok', [['done', 2]]],
  ['✓2 tight', [['done', 2]]],
  ['✗ [3] failed', [['failed', 3]]],
  ['… 4 working', [['in_progress', 4]]],
  ['□ [5] back to pending', [['pending', 5]]],
  ['   ✓ [1] indented', [['done', 1]]],
  ['✓ [12]', [['done', 12]]],
  ['✓ [3]done tight bracket', [['done', 3]]],
  ['✓ 3', [['done', 3]]],
  ['text before ✓ [1] is not an ack', []],
  ['- ✓ [1] bullets are not acks', []],
  ['✓ step one without number', []],
  ['✓ [x] not a number', []],
  ['✓ 1a glued text', []],
  ['v [1] ascii v', []],
  ['... [1] ascii dots', []],
  [
    'done\n✓ [1] a\nnoise\n✗ 2: b\r\n… [3] c',
    [
      ['done', 1],
      ['failed', 2],
      ['in_progress', 3],
    ],
  ],
  ['', []],
];

for (const [notes, want] of ACK_CASES) {
  test(`parseAckLines(${JSON.stringify(notes)})`, () => {
    assert.deepEqual(
      parseAckLines(notes).map((a) => [a.status, a.n]),
      want,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Lifecycle helpers
// ---------------------------------------------------------------------------------------------

const byId = (xs: PlanSnapshot[]) => [...xs].sort((x, y) => x.plan_id.localeCompare(y.plan_id));

class Timeline {
  blocks: Block[] = [];
  get plans(): PlanSnapshot[] {
    return latestPlanSnapshots(this.blocks);
  }
  cmd(command: PlanCommand, turnId: string, ts: string, newId = '00000000') {
    const r = applyPlanCommand(this.plans, command, { turnId, ts, newId });
    this.blocks.push(...r.blocks);
    assert.deepEqual(byId(latestPlanSnapshots(this.blocks)), byId(r.snapshots), 'returned snapshots match the blocks');
    if (!r.ok) throw new Error(`plan command failed: ${r.code}: ${r.message}`);
    return r;
  }
  ack(notes: string, turnId: string, ts: string, iter: number) {
    const r = applyAcks(notes, this.plans, { turnId, ts, iter });
    this.blocks.push(...r.blocks);
    assert.deepEqual(byId(latestPlanSnapshots(this.blocks)), byId(r.snapshots), 'returned snapshots match the blocks');
    return r;
  }
  get(id: string): PlanSnapshot {
    const s = this.plans.find((p) => p.plan_id === id);
    assert.ok(s, `plan ${id} exists`);
    return s;
  }
}

const ts = (m: number) => `2026-03-01T10:${String(m).padStart(2, '0')}:00Z`;

test('newPlanId: plan:<turn>:<8 hex>, validated', () => {
  assert.equal(newPlanId('turn_1', 'a1b2c3d4'), 'plan:turn_1:a1b2c3d4');
  assert.throws(() => newPlanId('turn_1', 'XYZ'), /8 lower-case hex/);
  assert.throws(() => newPlanId('turn.1', 'a1b2c3d4'), /invalid turn id/);
});

test('new plan: current, pending steps, JSON snapshot at ar:<turn>.react.plan.<id>', () => {
  const tl = new Timeline();
  const r = tl.cmd(
    { mode: 'new', steps: ['collect', ' compare \n trends ', '', 'draft'] },
    'turn_1',
    ts(0),
    'aaaaaaaa',
  );
  assert.equal(r.ok, true);
  assert.equal(r.plan_id, 'plan:turn_1:aaaaaaaa');
  assert.equal(r.blocks.length, 1);
  const b = r.blocks[0]!;
  assert.equal(b.type, 'react.plan');
  assert.equal(b.mime, 'application/json');
  assert.equal(b.path, 'ar:turn_1.react.plan.plan:turn_1:aaaaaaaa');
  const snap = parsePlanBlock(b);
  assert.deepEqual(snap.steps, ['collect', 'compare trends', 'draft']);
  assert.equal(snap.current, true);
  assert.equal(snap.origin_turn_id, 'turn_1');
  assert.equal(snap.created_ts, ts(0));
  assert.ok(isPlanOpen(snap));
  assert.equal(currentOpenPlan(tl.plans)?.plan_id, r.plan_id);
});

test('command errors are model-facing results with no blocks', () => {
  const tl = new Timeline();
  const cases: Array<[PlanCommand, string]> = [
    [{ mode: 'new' }, 'missing_steps'],
    [{ mode: 'new', steps: ['  ', ''] }, 'missing_steps'],
    [{ mode: 'new', steps: Array.from({ length: 51 }, (_, i) => `s${i}`) }, 'too_many_steps'],
    [{ mode: 'activate' }, 'missing_plan_id'],
    [{ mode: 'activate', plan_id: 'nope' }, 'unknown_plan'],
    [{ mode: 'close' }, 'no_current_plan'],
    [{ mode: 'replace', steps: ['x'] }, 'no_current_plan'],
    [{ mode: 'close', plan_id: 'nope' }, 'unknown_plan'],
  ];
  for (const [cmd, code] of cases) {
    const r = applyPlanCommand(tl.plans, cmd, { turnId: 'turn_1', ts: ts(0), newId: '00000000' });
    assert.equal(r.ok, false, JSON.stringify(cmd));
    assert.equal(!r.ok && r.code, code, JSON.stringify(cmd));
    assert.deepEqual(r.blocks, []);
    assert.ok(r.message.length > 0);
  }
  assert.throws(() =>
    applyPlanCommand([], { mode: 'explode' } as never, { turnId: 't', ts: ts(0), newId: '00000000' }),
  );
});

test('lifecycle across turns: new, acks, new (demotes), activate, replace, close, complete', () => {
  const tl = new Timeline();
  // turn 1: plan A, progress
  const a = tl.cmd({ mode: 'new', steps: ['s1', 's2', 's3'] }, 'turn_1', ts(0), 'aaaaaaaa').plan_id;
  const r = tl.ack('✓ [1] s1 done\n… [2] working', 'turn_1', ts(1), 2);
  assert.equal(r.plan_id, a);
  assert.equal(r.blocks.filter((b) => b.type === 'react.plan.ack').length, 2);
  assert.equal(r.blocks.at(-1)!.type, 'react.plan');
  assert.deepEqual(
    r.blocks.filter((b) => b.type === 'react.plan.ack').map((b) => b.text),
    ['✓ 1. s1', '… 2. s2'],
  );
  assert.equal(r.blocks[0]!.path, 'ar:turn_1.react.plan.ack.2');
  assert.deepEqual(tl.get(a).status, { '1': 'done', '2': 'in_progress' });
  assert.equal(tl.get(a).last_ack_turn_id, 'turn_1');

  // turn 2: a second plan B becomes current; A stays open but not current
  const b = tl.cmd({ mode: 'new', steps: ['b1', 'b2'] }, 'turn_2', ts(10), 'bbbbbbbb').plan_id;
  assert.equal(tl.get(a).current, false);
  assert.ok(isPlanOpen(tl.get(a)));
  assert.equal(currentOpenPlan(tl.plans)?.plan_id, b);
  // acks go to B only; merged snapshot keeps A's status untouched
  tl.ack('✓ 1 b1', 'turn_2', ts(11), 1);
  assert.deepEqual(tl.get(b).status, { '1': 'done' });
  assert.deepEqual(tl.get(a).status, { '1': 'done', '2': 'in_progress' });

  // turn 3: activate A again (updates last_ts), ack continues A's status
  tl.cmd({ mode: 'activate', plan_id: a }, 'turn_3', ts(20));
  assert.equal(tl.get(a).current, true);
  assert.equal(tl.get(b).current, false);
  assert.equal(tl.get(a).last_turn_id, 'turn_3');
  const again = applyPlanCommand(
    tl.plans,
    { mode: 'activate', plan_id: a },
    { turnId: 'turn_3', ts: ts(21), newId: '00000000' },
  );
  assert.equal(again.ok, true);
  assert.equal(again.blocks.length, 0);
  tl.ack('✓ [2]\n✗ [3] gave up', 'turn_3', ts(22), 3);
  assert.ok(isPlanComplete(tl.get(a)));
  assert.ok(!isPlanOpen(tl.get(a)));
  // completing the current plan does not auto-activate B
  assert.equal(currentOpenPlan(tl.plans), undefined);
  assert.equal(tl.ack('✓ [1]', 'turn_3', ts(23), 4).blocks.length, 0);
  const notOpen = applyPlanCommand(
    tl.plans,
    { mode: 'activate', plan_id: a },
    { turnId: 'turn_3', ts: ts(24), newId: '00000000' },
  );
  assert.equal(!notOpen.ok && notOpen.code, 'plan_not_open');

  // turn 4: activate B, replace it with C
  tl.cmd({ mode: 'activate', plan_id: b }, 'turn_4', ts(30));
  const rep = tl.cmd({ mode: 'replace', steps: ['c1'] }, 'turn_4', ts(31), 'cccccccc');
  const c = rep.plan_id;
  assert.equal(rep.blocks.length, 2);
  assert.equal(tl.get(b).superseded_by_plan_id, c);
  assert.equal(tl.get(b).superseded_turn_id, 'turn_4');
  assert.equal(tl.get(b).current, false);
  assert.equal(currentOpenPlan(tl.plans)?.plan_id, c);
  const rep2 = applyPlanCommand(
    tl.plans,
    { mode: 'replace', plan_id: b, steps: ['x'] },
    { turnId: 'turn_4', ts: ts(32), newId: 'dddddddd' },
  );
  assert.equal(!rep2.ok && rep2.code, 'plan_not_open');

  // turn 5: close C; nothing becomes current
  tl.cmd({ mode: 'close' }, 'turn_5', ts(40));
  assert.equal(tl.get(c).closed_turn_id, 'turn_5');
  assert.equal(currentOpenPlan(tl.plans), undefined);
  const closeAgain = applyPlanCommand(
    tl.plans,
    { mode: 'close', plan_id: c },
    { turnId: 'turn_5', ts: ts(41), newId: '00000000' },
  );
  assert.equal(!closeAgain.ok && closeAgain.code, 'plan_not_open');
  assert.equal(renderOpenPlans(tl.plans), '[OPEN PLANS]\n  - plans: none');

  // ar:plan.latest:<id> resolves to the newest snapshot of each lineage
  for (const id of [a, b, c]) {
    const found = resolvePath(tl.blocks, `ar:plan.latest:${id}`);
    assert.equal(found.source === 'timeline' && found.blocks.length, 1);
    assert.deepEqual(found.source === 'timeline' && parsePlanBlock(found.blocks[0]!), tl.get(id));
  }
  // two commands at the same ts without a key still get distinct block ids
  const same = new Timeline();
  const x = same.cmd({ mode: 'new', steps: ['x'] }, 'turn_9', ts(50), '11111111').plan_id;
  const y = same.cmd({ mode: 'new', steps: ['y'] }, 'turn_9', ts(50), '22222222').plan_id;
  same.cmd({ mode: 'activate', plan_id: x }, 'turn_9', ts(50));
  same.cmd({ mode: 'activate', plan_id: y }, 'turn_9', ts(50));
  assert.equal(new Set(same.blocks.map((q) => q.id)).size, same.blocks.length);
  assert.equal(currentOpenPlan(same.plans)?.plan_id, y);
  // retries with the same inputs give the same ids (idempotent appends)
  const retry1 = applyPlanCommand(
    [],
    { mode: 'new', steps: ['a'] },
    { turnId: 'turn_9', ts: ts(1), newId: '33333333' },
  );
  const retry2 = applyPlanCommand(
    [],
    { mode: 'new', steps: ['a'] },
    { turnId: 'turn_9', ts: ts(1), newId: '33333333' },
  );
  assert.deepEqual(retry1.blocks, retry2.blocks);
  // every block id is unique (idempotent appends never collide)
  assert.equal(new Set(tl.blocks.map((x) => x.id)).size, tl.blocks.length);
});

test('acks: out-of-range steps ignored; nothing applied without a current open plan', () => {
  const tl = new Timeline();
  let r = tl.ack('✓ [1] x', 'turn_1', ts(0), 1);
  assert.deepEqual(r.blocks, []);
  assert.equal(r.ignored.length, 1);
  tl.cmd({ mode: 'new', steps: ['a', 'b'] }, 'turn_1', ts(1), 'aaaaaaaa');
  r = tl.ack('✓ [0] zero\n✓ [3] too big\n✓ 2023 was a year', 'turn_1', ts(2), 2);
  assert.deepEqual(r.blocks, []);
  assert.equal(r.ignored.length, 3);
  r = tl.ack('✓ [2] b\n✓ [9] no', 'turn_1', ts(3), 3);
  assert.equal(r.applied.length, 1);
  assert.equal(r.ignored.length, 1);
  assert.equal(r.blocks.length, 2);
  // later ack on the same step wins, and re-opening a step with □ works
  r = tl.ack('✓ [1]\n□ [1] reopened', 'turn_1', ts(4), 4);
  assert.equal(r.snapshots.find((s) => s.plan_id === r.plan_id)!.status['1'], 'pending');
});

test('latestPlanSnapshots: latest per lineage; bad plan JSON is a readable error', () => {
  const tl = new Timeline();
  tl.cmd({ mode: 'new', steps: ['a'] }, 'turn_1', ts(0), 'aaaaaaaa');
  tl.cmd({ mode: 'new', steps: ['b'] }, 'turn_1', ts(1), 'bbbbbbbb');
  assert.deepEqual(
    latestPlanSnapshots(tl.blocks).map((s) => [s.plan_id, s.current]),
    [
      ['plan:turn_1:aaaaaaaa', false],
      ['plan:turn_1:bbbbbbbb', true],
    ],
  );
  const bad = makeBlock({
    type: 'react.plan',
    author: 'react',
    turn_id: 'turn_1',
    ts: ts(2),
    text: '{nope',
    key: 'bad',
  });
  assert.throws(() => latestPlanSnapshots([bad]), /does not hold JSON/);
  const invalid = makeBlock({
    type: 'react.plan',
    author: 'react',
    turn_id: 'turn_1',
    ts: ts(2),
    text: '{"plan_id":"x"}',
    key: 'bad2',
  });
  assert.throws(() => latestPlanSnapshots([invalid]), /invalid snapshot: steps/);
});

function snap(id: string, lastMin: number, extra: Partial<PlanSnapshot> = {}): PlanSnapshot {
  return {
    plan_id: id,
    steps: ['one', 'two'],
    status: {},
    current: false,
    created_ts: ts(0),
    last_ts: ts(lastMin),
    origin_turn_id: 'turn_1',
    last_turn_id: 'turn_2',
    rev: 1,
    ...extra,
  };
}

test('renderOpenPlans: exact format, current marked, step markers', () => {
  const text = renderOpenPlans([snap('p1', 1, { current: true, status: { '1': 'done', '2': 'in_progress' } })]);
  assert.equal(
    text,
    [
      '[OPEN PLANS]',
      '  - plans: 1 visible',
      '    • plan_id=p1 (current)',
      '      snapshot_ref=ar:plan.latest:p1',
      '      created_turn=turn_1',
      `      created_ts=${ts(0)}`,
      '      last_update_turn=turn_2',
      `      last_update_ts=${ts(1)}`,
      '      ✓ [1] one',
      '      … [2] two',
    ].join('\n'),
  );
  assert.match(renderOpenPlans([snap('p', 1, { status: { '1': 'failed' } })]), /✗ \[1\] one\n {6}□ \[2\] two/);
});

test('renderOpenPlans: last 4 open by last_ts, current always shown, terminal plans hidden', () => {
  const plans = [
    snap('old_current', 1, { current: true }),
    snap('p2', 2),
    snap('p3', 3),
    snap('p4', 4),
    snap('p5', 5),
    snap('p6', 6),
    snap('closed', 7, { closed_ts: ts(7) }),
    snap('superseded', 8, { superseded_ts: ts(8) }),
    snap('complete', 9, { status: { '1': 'done', '2': 'failed' } }),
    snap('empty', 0, { steps: [] }),
  ];
  const text = renderOpenPlans(plans);
  const shown = [...text.matchAll(/plan_id=(\S+)/g)].map((m) => m[1]);
  assert.deepEqual(shown, ['old_current', 'p4', 'p5', 'p6']);
  assert.match(text, /plans: 4 visible \(3 older open not shown\)/);
  assert.match(text, /plan_id=old_current \(current\)/);
  assert.doesNotMatch(text, /closed|superseded|complete/);
  const noCurrent = renderOpenPlans(plans.slice(1, 6));
  assert.deepEqual(
    [...noCurrent.matchAll(/plan_id=(\S+)/g)].map((m) => m[1]),
    ['p3', 'p4', 'p5', 'p6'],
  );
  assert.doesNotMatch(noCurrent, /\(current\)/);
});

test('renderPlanHistory lists lineages with their terminal state', () => {
  const text = renderPlanHistory([
    snap('a', 1, { closed_ts: ts(1) }),
    snap('b', 2, { superseded_ts: ts(2) }),
    snap('c', 3, { status: { '1': 'done', '2': 'done' } }),
    snap('d', 4),
  ]);
  assert.match(text, /^\[COMPACTED PLAN HISTORY\]/);
  assert.match(text, /- plan #1 id=a \(closed\) last=/);
  assert.match(text, /- plan #2 id=b \(superseded\)/);
  assert.match(text, /- plan #3 id=c \(complete\)/);
  assert.match(text, /- plan #4 id=d \(unfinished\)/);
  assert.match(text, /snapshot_ref: ar:plan.latest:d/);
  assert.equal(renderPlanHistory([]), '');
});
