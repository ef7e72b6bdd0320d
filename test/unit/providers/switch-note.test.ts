/**
 * The timeline note when a round is answered by another model than the one before
 * (core/model/switch-note.ts) and the round's answering-model tracker
 * (activities/model/answering.ts): a note only when the model changes — a fallback, then the
 * primary again — never in a turn whose chain did not move on, with a deterministic id; the
 * answering model stamped on a round's blocks, so a retried round's stored outcome names it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lastNotedModel, modelSwitchNote, MODEL_SWITCH_KIND } from '../../../core/model/switch-note';
import { answeringModel } from '../../../activities/model/answering';
import { blockText } from '../../../core/timeline/render';
import { makeBlock } from '../../../core/timeline/block';
import { ANSWERED_BY_META, answeredByOf, stampAnsweredBy } from '../../../core/model/answered-by';
import { storedOutcome } from '../../../core/turn/stored-outcome';

const primary = { provider: 'anthropic:claude-sonnet-5-5', model: 'claude-sonnet-5-5' };
const fallback = { provider: 'openai:gpt-4o-mini', model: 'gpt-4o-mini' };
const at = { turnId: 'turn_1', ts: '2026-01-01T00:00:00.000Z' };

test('a fallback round is noted with what changes; the primary again is noted back; the same model adds nothing', () => {
  assert.equal(modelSwitchNote({ ...at, blocks: [], round: 1, primary, answered: primary }), undefined);

  const first = modelSwitchNote({ ...at, blocks: [], round: 1, primary, answered: fallback, reason: 'overloaded' })!;
  assert.equal(first.type, 'system.message');
  assert.equal(first.id, 'turn_1/system.message/model_switch_r1');
  assert.equal(first.path, 'ar:turn_1.system.message.model_switch_r1');
  assert.deepEqual(first.meta, {
    kind: MODEL_SWITCH_KIND,
    iteration: 1,
    provider: fallback.provider,
    model: 'gpt-4o-mini',
    from_provider: primary.provider,
    from_model: 'claude-sonnet-5-5',
    reason: 'overloaded',
  });
  assert.match(first.text!, /Round 1 was answered by openai:gpt-4o-mini instead of anthropic:claude-sonnet-5-5/);
  assert.match(first.text!, /cache is per provider: the first call on openai:gpt-4o-mini writes its own cache/);
  // The model reads it as it is.
  assert.equal(blockText(first), first.text);
  assert.deepEqual(lastNotedModel([first]), fallback);

  // Round 2 on the fallback again: nothing new. Round 3 on the primary: noted back.
  assert.equal(
    modelSwitchNote({ ...at, blocks: [first], round: 2, primary, answered: fallback, reason: 'overloaded' }),
    undefined,
  );
  const back = modelSwitchNote({ ...at, blocks: [first], round: 3, primary, answered: primary })!;
  assert.match(back.text!, /Round 3 was answered by anthropic:claude-sonnet-5-5 again, after openai:gpt-4o-mini/);
  assert.equal(back.meta['from_provider'], fallback.provider);
  assert.deepEqual(lastNotedModel([first, back]), primary);
  // Deterministic: the same inputs give the same block.
  assert.deepEqual(modelSwitchNote({ ...at, blocks: [first], round: 3, primary, answered: primary }), back);
});

test('the round tracker: the primary unless the chain moved on; metadata refines who answered, never a note by itself', () => {
  const quiet = answeringModel(primary);
  // A provider naming a dated model id in its metadata: the outcome says so, the timeline gets no note.
  quiet.reported({ provider: primary.provider, model: 'claude-sonnet-5-5-20260101' });
  assert.deepEqual(quiet.answeredBy, { provider: primary.provider, model: 'claude-sonnet-5-5-20260101' });
  assert.deepEqual(quiet.note({ ...at, blocks: [], round: 1 }), []);

  const moved = answeringModel(primary);
  moved.switched(fallback, 'overloaded');
  moved.reported({ provider: fallback.provider, model: fallback.model });
  assert.deepEqual(moved.answeredBy, fallback);
  const [note] = moved.note({ ...at, blocks: [], round: 2 });
  assert.equal(note?.meta['reason'], 'overloaded');
  assert.equal(note?.id, 'turn_1/system.message/model_switch_r2');
});

test("the answering model is stamped on the round's call blocks and completion, and a retried round names it again", () => {
  const completion = makeBlock({
    type: 'assistant.completion',
    author: 'assistant',
    turn_id: 'turn_1',
    ts: at.ts,
    key: 'r2',
    path: 'ar:turn_1.assistant.completion',
    text: 'done',
    meta: { iteration: 2, action: 'complete' },
  });
  const notes = makeBlock({ type: 'react.notes', author: 'assistant', turn_id: 'turn_1', ts: at.ts, text: 'n' });
  const [stampedNotes, stamped] = stampAnsweredBy([notes, completion], fallback);
  assert.equal(stampedNotes!.meta[ANSWERED_BY_META], undefined, 'only the blocks a stored outcome reads');
  assert.deepEqual(answeredByOf(stamped), fallback);
  const again = storedOutcome([stamped!], { turnId: 'turn_1', round: 2, mode: 'normal' }, 'wf', {
    activityOptions: () => ({}) as never,
  });
  assert.deepEqual(again, {
    kind: 'final',
    action: 'complete',
    answer: 'done',
    completionPath: 'complete',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    answeredBy: fallback,
  });
  // Rounds recorded before the model was kept: no answeredBy.
  const old = storedOutcome([completion], { turnId: 'turn_1', round: 2, mode: 'normal' }, 'wf', {
    activityOptions: () => ({}) as never,
  });
  assert.equal(old && 'answeredBy' in old, false);
});
