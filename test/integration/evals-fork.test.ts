/**
 * `dreact fork`: a conversation forked at turn 1 sees the original's turn 1 by reference (no block
 * copied, turn 2 not in it) and is re-run from there with another agent: its next turn is turn 2,
 * under that agent, and the request that turn sent holds the original's turn 1 and the new agent's
 * instructions (rebuilt with inspect). The original is untouched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { forkConversationAt } from '../../apps/cli/fork-command';
import { inspectRoundRequest } from '../../client/inspect';
import { countBlocks, loadBlocks } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';

let stack: TestStack;
const dir = mkdtempSync(join(tmpdir(), 'evals-fork-'));
mkdirSync(join(dir, 'agents'));
writeFileSync(join(dir, 'agents', 'support-a.yaml'), 'name: support-a\ninstructions: You are Acme support A.\n');
writeFileSync(join(dir, 'agents', 'support-b.yaml'), 'name: support-b\ninstructions: You are Acme support B, brief.\n');
const model = { provider: 'scripted' as const, script: { rounds: [complete('noted')] } };

before(async () => {
  stack = await createTestStack('evals_fork');
  await stack.startWorker({ agents: { dir: join(dir, 'agents') } });
});
after(async () => stack.teardown());

test('a fork shares the original up to a turn and re-runs from there with another agent', async () => {
  const source = uniqueId('conv');
  await stack.client.startTurn(
    source,
    'remember the number 42',
    { model },
    undefined,
    undefined,
    undefined,
    'support-a',
  );
  await stack.client.result(source, 1);
  await stack.client.startTurn(source, 'now forget it', { model });
  await stack.client.result(source, 2);

  const fork = await forkConversationAt(stack.server.env.client, stack.db.pool, {
    source,
    upToTurn: 1,
    target: `${source}-fork`,
    agent: 'support-b',
    taskQueue: stack.taskQueue,
  });
  const target = fork.conversationId;
  assert.equal(await countBlocks(stack.db.pool, target), 0, 'no block copied');
  const shared = await loadBlocks(stack.db.pool, target);
  assert.ok(shared.length > 0);
  assert.deepEqual([...new Set(shared.map((b) => b.turn_id))], ['turn_1']);
  assert.ok(shared.some((b) => b.type === 'user.prompt' && b.text === 'remember the number 42'));

  const started = await stack.client.startTurn(
    target,
    'what number?',
    { model },
    undefined,
    undefined,
    undefined,
    'support-b',
  );
  assert.equal(started.turnIndex, 2, 'the fork continues at turn 2');
  const result = await stack.client.result(target, 2);
  assert.equal(result.answer, 'noted');
  const turns = await listTurns(stack.db.pool, target);
  assert.deepEqual(
    turns.map((t) => [t.turnIndex, t.agentName]),
    [[2, 'support-b']],
  );
  const all = await loadBlocks(stack.db.pool, target);
  assert.deepEqual([...new Set(all.map((b) => b.turn_id))], ['turn_1', 'turn_2']);

  // What the fork's turn sent: the original's turn 1, not its turn 2, under agent B's instructions.
  const seen = await inspectRoundRequest(
    stack.server.env.client,
    { conversationId: target, turnIndex: 2, round: 1 },
    stack.taskQueue,
  );
  const text = JSON.stringify(seen.request);
  assert.match(text, /remember the number 42/);
  assert.doesNotMatch(text, /now forget it/);
  assert.match(JSON.stringify(seen.request.system), /Acme support B, brief/);

  // The original is untouched.
  const original = await loadBlocks(stack.db.pool, source);
  assert.ok(original.some((b) => b.turn_id === 'turn_2'));
  assert.ok(!original.some((b) => b.text === 'what number?'));
});
