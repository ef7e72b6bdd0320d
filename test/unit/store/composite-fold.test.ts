import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldAttributes, type AttributeRow } from '../../../store/turn-display-store';

const row = (seq: number, key: unknown, value: unknown, turn: string | null = 'turn_1', instance: number | null = 0) =>
  ({ seq, turn_id: turn, instance, payload: { key, value } }) as AttributeRow;
const plain = (f: ReturnType<typeof foldAttributes>) =>
  f.map((c) => ({ turnId: c.turnId, instance: c.instance, firstSeq: c.firstSeq, attributes: [...c.attrs] }));

test('folding attribute events: later values in place, new keys last, canvases in order of their first event', () => {
  const folded = foldAttributes(
    [],
    [
      row(1, 'title', 'Draft'),
      row(2, 'x', 1, 'turn_1', 1),
      row(3, 'total', 22),
      row(4, 'title', 'Final'),
      row(5, 'a', true, 'turn_2', null), // no instance: instance 0
      row(6, 42, 'not a key'), // skipped: the key is not a string
      row(7, 'orphan', 1, null), // skipped: no turn
    ],
  );
  assert.deepEqual(plain(folded), [
    {
      turnId: 'turn_1',
      instance: 0,
      firstSeq: 1,
      attributes: [
        ['title', 'Final'],
        ['total', 22],
      ],
    },
    { turnId: 'turn_1', instance: 1, firstSeq: 2, attributes: [['x', 1]] },
    { turnId: 'turn_2', instance: 0, firstSeq: 5, attributes: [['a', true]] },
  ]);
});

test('folding in two parts (kept rows, then the events still on the stream) equals folding at once', () => {
  const rows = [row(1, 'a', 1), row(2, 'b', 2), row(3, 'a', 3), row(4, 'c', 4, 'turn_1', 1), row(5, 'b', 5)];
  const whole = plain(foldAttributes([], rows));
  for (let cut = 0; cut <= rows.length; cut++) {
    const kept = foldAttributes([], rows.slice(0, cut));
    assert.deepEqual(plain(foldAttributes(kept, rows.slice(cut))), whole, `cut after ${cut}`);
  }
  // The start is not changed by a fold on top of it.
  const kept = foldAttributes([], rows.slice(0, 2));
  foldAttributes(kept, rows.slice(2));
  assert.deepEqual(
    [...kept[0]!.attrs],
    [
      ['a', 1],
      ['b', 2],
    ],
  );
});
