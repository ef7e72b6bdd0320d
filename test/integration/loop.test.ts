import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, thinking, uniqueId, waitFor, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('loop');
  await stack.startWorker({ maxRounds: 3 });
});
after(async () => stack.teardown());

const write = (i: number) =>
  callTool('react.write', { path: `n${i}.md`, channel: 'internal', content: `note ${i}`, kind: 'file' });

test('iteration exhaustion ends the turn with a fallback answer that summarises what was done (worker default budget)', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'keep writing notes', {
    model: { provider: 'scripted', script: { rounds: [write(1), write(2), write(3), write(4)] } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'iteration_cap');
  assert.equal(r.rounds, 3, 'the worker default (3) applies when the turn sets no budget');
  assert.match(r.answer, /used all 3 iterations/);
  assert.match(r.answer, /1\. react\.write; 2\. react\.write; 3\. react\.write/);
  const completion = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'assistant.completion');
  assert.equal(completion.length, 1);
  assert.equal(completion[0]!.meta.fallback, true);
});

test('invalid decisions become notices the model sees; after max_decision_retries the turn exits cleanly', async () => {
  const conv = uniqueId('conv');
  const bad = thinking('oops') + '<channel:ReactDecisionOutV2>{"action":"dance"}</channel:ReactDecisionOutV2>';
  await stack.client.startTurn(conv, 'misbehave', {
    maxRounds: 10,
    model: { provider: 'scripted', script: { rounds: [bad] } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'decision_failure');
  assert.equal(r.rounds, 3, 'first attempt + 2 retries');
  assert.match(r.answer, /kept failing validation/);
  const notices = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.notice');
  assert.equal(notices.length, 3);
  assert.ok(
    notices.every(
      (n) => JSON.parse(n.text!).code === 'protocol_violation.invalid_action:dance' && n.meta.code === 'invalid_action',
    ),
    notices.map((n) => n.text).join('\n'),
  );
});

test('a corrected decision after a notice continues the turn normally', async () => {
  const conv = uniqueId('conv');
  const missing =
    thinking('x') +
    '<channel:ReactDecisionOutV2>{"action":"call_tool","notes":"n","tool_call":{"params":{}}}</channel:ReactDecisionOutV2>';
  await stack.client.startTurn(conv, 'recover', {
    model: { provider: 'scripted', script: { rounds: [missing, complete('recovered')] } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'complete');
  assert.equal(r.answer, 'recovered');
  const notice = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.notice');
  assert.ok(notice);
});

test('a followup grants one reactive iteration (turn state shows the bonus)', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'two rounds only', {
    maxRounds: 2,
    model: {
      provider: 'scripted',
      script: { rounds: [write(1), write(2), complete('done in round 3: {{event}}')], chunkSize: 8, latencyMs: 40 },
    },
  });
  await waitFor(
    'round 1 to start',
    async () => (await stack.client.turnState(conv, 1).catch(() => undefined))?.round === 1,
  );
  await stack.client.followup(conv, 'one more thing');
  await waitFor('the bonus', async () => (await stack.client.turnState(conv, 1)).reactiveBonus === 1);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.rounds, 3);
  assert.equal(r.completionPath, 'complete');
  assert.equal(r.answer, 'done in round 3: one more thing');
});

test('configuration errors fail the turn at once with a clear, non-retried message', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'use a script that does not exist', {
    model: { provider: 'scripted', script: 'no-such-script' },
  });
  await assert.rejects(stack.client.result(conv, 1), (err: Error) => {
    const chain: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) chain.push(e.message);
    assert.ok(
      chain.some((m) => /unknown scripted model script "no-such-script"/.test(m)),
      chain.join(' <- '),
    );
    return true;
  });
  const attempts = await stack.db.pool.query(
    `SELECT count(*)::int AS n FROM stream_events WHERE conversation_id = $1 AND kind = 'retry'`,
    [conv],
  );
  assert.equal(attempts.rows[0].n, 0, 'not retried');
});
