import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveScript } from '../../../activities/providers/scripted';
import { noteDecision, NOTES_ANSWER } from '../../../activities/providers/note-script';

test('the scripted model resolves notes-<k> on the worker: k rounds, k − 1 notes then the answer', () => {
  const script = resolveScript('notes-3');
  assert.equal(script.rounds.length, 3);
  assert.deepEqual(script.rounds, [noteDecision(1, 3), noteDecision(2, 3), noteDecision(3, 3)]);
  assert.match(script.rounds[0]!, /load-note-1\.md/);
  assert.match(script.rounds[2]!, new RegExp(NOTES_ANSWER));
  assert.equal(script.latencyMs, 0);
});

test('a notes script out of range or an unknown name is refused with the names it takes', () => {
  assert.throws(() => resolveScript('notes-0'), /notes-<k> takes k from 1 to 100/);
  assert.throws(() => resolveScript('notes-101'), /notes-<k> takes k from 1 to 100/);
  assert.throws(() => resolveScript('nope'), /unknown scripted model script "nope" \(known: demo, .*notes-<k>\)/);
});
