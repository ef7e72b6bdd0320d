import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { applyAcks, applyPlanCommand, latestPlanSnapshots } from '../../../core/timeline/plans';
import { planEvents, planView } from '../../../core/timeline/plan-view';
import { planLines } from '../../../apps/cli/render';
import { parseStreamEvent } from '../../../core/stream/events';

const ts = '2026-01-01T00:00:00.000Z';
const created = applyPlanCommand(
  [],
  { mode: 'new', steps: ['Collect', 'Draft', 'Check'] },
  {
    turnId: 'turn_1',
    ts,
    newId: '0000abcd',
  },
);

test('a new plan streams as one plan event with every step pending', () => {
  assert.ok(created.ok);
  const events = planEvents(created.blocks);
  assert.equal(events.length, 1);
  assert.deepEqual(events[0]!.payload.plan, {
    planId: 'plan:turn_1:0000abcd',
    steps: [
      { n: 1, text: 'Collect', status: 'pending' },
      { n: 2, text: 'Draft', status: 'pending' },
      { n: 3, text: 'Check', status: 'pending' },
    ],
    state: 'open',
  });
});

test('acks in notes stream the merged snapshot; other blocks stream nothing', () => {
  const acked = applyAcks('✓ [1] collected\n✗ [2] no draft\n… [3]', created.snapshots, {
    turnId: 'turn_1',
    ts,
    iter: 2,
  });
  const other = makeBlock({ type: 'react.notes', author: 'react', turn_id: 'turn_1', ts, text: 'x' });
  const events = planEvents([other, ...acked.blocks]);
  assert.equal(events.length, 1, 'ack blocks are not snapshots');
  assert.deepEqual(
    events[0]!.payload.plan.steps.map((s) => s.status),
    ['done', 'failed', 'in_progress'],
  );
  // The event is a valid stream event (the publisher only accepts the protocol's events).
  assert.doesNotThrow(() =>
    parseStreamEvent({ conversationId: 'c', seq: 1, ts, turnId: 'turn_1', attempt: 1, ...events[0]! }),
  );
});

test('plan states: complete when every step is done or failed, closed, superseded', () => {
  const all = applyAcks('✓ [1]\n✓ [2]\n✗ [3]', created.snapshots, { turnId: 'turn_1', ts, iter: 2 });
  assert.equal(planView(all.snapshots[0]!).state, 'complete');
  const closed = applyPlanCommand(created.snapshots, { mode: 'close' }, { turnId: 'turn_2', ts, newId: '1' });
  assert.ok(closed.ok);
  assert.equal(planView(latestPlanSnapshots(closed.blocks)[0]!).state, 'closed');
  const replaced = applyPlanCommand(
    created.snapshots,
    { mode: 'replace', steps: ['Other'] },
    {
      turnId: 'turn_2',
      ts,
      newId: '0000ffff',
    },
  );
  assert.ok(replaced.ok);
  const states = planEvents(replaced.blocks).map((e) => `${e.payload.plan.planId}:${e.payload.plan.state}`);
  assert.deepEqual(states.sort(), ['plan:turn_1:0000abcd:superseded', 'plan:turn_2:0000ffff:open']);
});

test('the CLI prints a streamed plan with its step markers, and says so when the plan is unreadable', () => {
  const plan = planEvents(created.blocks)[0]!.payload.plan;
  assert.equal(planLines(plan), '☰ plan (open)\n  □ 1. Collect\n  □ 2. Draft\n  □ 3. Check\n');
  assert.match(planLines({ steps: 'nope' }), /plan event without a readable plan/);
});
