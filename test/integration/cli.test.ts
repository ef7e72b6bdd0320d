/**
 * The `dreact` CLI as a user runs it: separate processes, the embedded stack (its own Temporal dev
 * server with a SQLite file + PGlite), state on disk so a conversation continues across
 * invocations, clear errors and exit codes for bad input.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDreact } from '../support/dreact-cli';

const home = mkdtempSync(join(tmpdir(), 'dreact-cli-'));
after(() => rmSync(home, { recursive: true, force: true }));

/** The embedded stack (not the test run's server), its state in `home`. */
const dreact = (args: string[]) =>
  runDreact(args, {
    env: {
      DREACT_HOME: home,
      TEMPORAL_ADDRESS: undefined,
      DATABASE_URL: undefined,
      DREACT_TEMPORAL_PORT: '17233',
      DREACT_PGLITE_PORT: '15432',
    },
  });

test('dreact turn --json starts the embedded stack; a second invocation continues the conversation', async () => {
  const first = await dreact(['turn', 'hello there', '--script', 'echo', '--json']);
  assert.equal(first.code, 0, first.stderr);
  const out1 = JSON.parse(first.stdout.trim()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(out1).sort(), [
    'answer',
    'completionPath',
    'conversationId',
    'models',
    'rounds',
    'turnId',
    'usage',
    'workflowId',
  ]);
  assert.equal(out1.turnId, 'turn_1');
  assert.deepEqual(out1.models, [{ provider: 'scripted' }], 'the model that answered');
  assert.equal(out1.workflowId, `conv/${String(out1.conversationId)}/turn/1`);
  assert.deepEqual(Object.keys(out1.usage as object).sort(), [
    'cacheReadTokens',
    'cacheWriteTokens',
    'inputTokens',
    'outputTokens',
  ]);

  const second = await dreact(['turn', 'and again', '--conversation', String(out1.conversationId), '--script', 'demo']);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /turn 2/);
  assert.match(second.stdout, /✓ react\.write/);
  assert.match(second.stdout, /\nanswered by: scripted\n/, 'the model that answered, after the answer');
  assert.match(second.stdout, /Temporal UI: http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/conv%2F/);
  // --max-rounds caps the turn's rounds (the demo script calls a tool first, so one round is the cap).
  const capped = await dreact([
    'turn',
    'once more',
    '--conversation',
    String(out1.conversationId),
    '--script',
    'demo',
    '--max-rounds',
    '1',
    '--json',
  ]);
  assert.equal(capped.code, 0, capped.stderr);
  const out3 = JSON.parse(capped.stdout.trim()) as { rounds: number; completionPath: string };
  assert.deepEqual([out3.rounds, out3.completionPath], [1, 'iteration_cap']);

  const timeline = await dreact(['timeline', String(out1.conversationId), '--json']);
  assert.equal(timeline.code, 0, timeline.stderr);
  const blocks = JSON.parse(timeline.stdout) as Array<{ turn_id: string; type: string }>;
  assert.deepEqual([...new Set(blocks.map((b) => b.turn_id))], ['turn_1', 'turn_2', 'turn_3']);

  const turns = await dreact(['turns', String(out1.conversationId)]);
  assert.equal(turns.code, 0, turns.stderr);
  assert.match(turns.stdout, /turn 1 .* completed \(complete, \d+ rounds\)/);
  assert.match(turns.stdout, /turn 2 .* completed/);

  const history = await dreact(['history', String(out1.conversationId), '--turn', '2']);
  assert.equal(history.code, 0, history.stderr);
  assert.match(history.stdout, /decide round 1/);
  assert.match(history.stdout, /tool react\.write/);

  const steer = await dreact(['steer', String(out1.conversationId), 'stop']);
  assert.equal(steer.code, 1);
  assert.match(steer.stderr, /has no running turn to steer/);
});

test('bad input: clear errors and exit code 2, nothing started', async () => {
  const empty = await dreact(['turn', '   ']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /prompt is empty/);
  const unknownProvider = await dreact(['turn', 'hi', '--provider', 'nope']);
  assert.notEqual(unknownProvider.code, 0);
  assert.match(unknownProvider.stderr, /unknown provider "nope"/);
});

test('dreact turn --attach: files are preflighted; a bad one is exit code 2 naming it, a good one is in the timeline', async () => {
  const notes = join(home, 'notes.csv');
  const fake = join(home, 'fake.png');
  writeFileSync(notes, 'city,temp\nOslo,3\n');
  writeFileSync(fake, Buffer.concat([Buffer.from('MZ'), Buffer.alloc(64, 1)]));
  const missing = await dreact(['turn', 'look', '--attach', join(home, 'nope.txt')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--attach .*nope\.txt: ENOENT/);
  const bad = await dreact(['turn', 'look', '--attach', notes, fake, '--script', 'echo', '--json']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /attachment "fake\.png" rejected \(type_not_allowed\)/);
  assert.equal(bad.stdout, '', 'no turn started');
  const ok = await dreact(['turn', 'look', '--attach', notes, '--script', 'echo', '--json']);
  assert.equal(ok.code, 0, ok.stderr);
  const { conversationId } = JSON.parse(ok.stdout.trim()) as { conversationId: string };
  const timeline = await dreact(['timeline', conversationId, '--json']);
  assert.equal(timeline.code, 0, timeline.stderr);
  const blocks = JSON.parse(timeline.stdout) as Array<{ type: string; path?: string; text?: string }>;
  const att = blocks.find((b) => b.type === 'user.attachment');
  assert.equal(att?.path, 'fi:turn_1.user.attachments/notes.csv');
  assert.equal(att?.text, 'city,temp\nOslo,3\n');
});
