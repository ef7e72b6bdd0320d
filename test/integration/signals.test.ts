import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { recordHistory } from '../support/fixtures';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('signals');
  await stack.startWorker();
});
after(async () => stack.teardown());

test('a steer during a slow decide round cancels it within the heartbeat timeout and the turn finalizes with the steer', async () => {
  const conv = uniqueId('conv');
  // Round 1 streams ~100 s of output: only a cancellation can end it early.
  const slow = complete('x'.repeat(2000));
  await stack.client.startTurn(conv, 'write a long essay', {
    model: {
      provider: 'scripted',
      script: { rounds: [slow], chunkSize: 4, latencyMs: 50, finalize: complete('Stopped: {{event}}') },
    },
  });
  await waitFor('round 1 to stream', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  const t0 = Date.now();
  await stack.client.steer(conv, 'stop and summarise now');
  await waitFor('the decide round to be interrupted', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.payload?.phase === 'interrupted'),
  );
  const elapsed = Date.now() - t0;
  assert.ok(elapsed < 5_000, `cancellation took ${elapsed} ms (heartbeat timeout 5 s)`);
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'Stopped: stop and summarise now');

  const blocks = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.turn_id === 'turn_1');
  const types = blocks.map((b) => b.type);
  assert.ok(types.includes('user.steer'), 'steer folded into the timeline');
  const interrupted = blocks.find((b) => b.meta.interrupted === true);
  assert.ok(interrupted, 'the interrupted round is recorded');
  assert.ok(types.indexOf('user.steer') < types.lastIndexOf('assistant.completion'));
  const steer = blocks.find((b) => b.type === 'user.steer')!;
  assert.match(steer.path ?? '', /^ar:turn_1\.external\.steer\.msg_/);
  await recordHistory(stack.server.address, result.workflowId, 'turn-steer-finalize-v3');
});

test('a followup during a turn is folded in at the next decision boundary and grants a reactive iteration', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'start', {
    maxIterations: 3,
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          callTool('react.write', { path: 'a.md', channel: 'internal', content: 'a', kind: 'file' }),
          complete('saw followup: {{event}}'),
        ],
        chunkSize: 8,
        latencyMs: 60,
      },
    },
  });
  await waitFor('round 1 to stream', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  await stack.client.followup(conv, 'also mention B');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'saw followup: also mention B');
  const blocks = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.turn_id === 'turn_1');
  const types = blocks.map((b) => b.type);
  const followupAt = types.indexOf('user.followup');
  assert.ok(followupAt > types.indexOf('react.tool.result'), 'folded after round 1 finished');
  assert.ok(followupAt < types.indexOf('assistant.completion'), 'and before the round that answered');
  const inject = (await readEvents(stack.db.pool, conv, 0)).filter((e) => e.kind === 'inject');
  assert.equal(inject.length, 1);
  await recordHistory(stack.server.address, result.workflowId, 'turn-followup-folded-v3');
});

test('a followup between turns starts exactly one new turn, even when sent twice', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'first', { model: { provider: 'scripted', script: 'echo' } });
  await stack.client.result(conv, 1);
  await waitFor('turn 1 to be released', async () => (await stack.client.conversationState(conv)).activeTurn === null);
  await stack.client.followup(conv, 'second question', 'msg_same');
  await stack.client.followup(conv, 'second question', 'msg_same');
  const r2 = await stack.client.result(conv, 2);
  assert.equal(r2.turnIndex, 2);
  assert.equal(r2.answer, 'Done: ');
  const view = await waitFor('turn 2 to be released', async () => {
    const v = await stack.client.conversationState(conv);
    return v.activeTurn === null ? v : undefined;
  });
  assert.equal(view.nextTurnIndex, 3, 'exactly one new turn');
  assert.equal(view.completedTurns, 2);
  const prompts = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'user.prompt');
  assert.deepEqual(
    prompts.map((b) => [b.turn_id, b.text]),
    [
      ['turn_1', 'first'],
      ['turn_2', 'second question'],
    ],
  );
  await recordHistory(stack.server.address, `conv/${conv}`, 'conversation-two-turns-v9-deprecated-patches');
});

test('bad input gets clear errors and writes nothing', async () => {
  const conv = uniqueId('conv');
  await assert.rejects(stack.client.startTurn(conv, '   '), /prompt is empty/);
  await assert.rejects(stack.client.startTurn(conv, 'x'.repeat(64_001)), /prompt is too long/);
  await assert.rejects(stack.client.startTurn('bad id!', 'hello'), /ids use letters/);
  await assert.rejects(stack.client.steer(conv, 'stop'), /unknown conversation/);
  await assert.rejects(stack.client.followup(conv, ''), /message is empty/);
  const rows = await stack.db.pool.query('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [conv]);
  assert.equal(rows.rows[0].n, 0);
  await assert.rejects(stack.client.conversationState(conv), /unknown conversation/);
});
