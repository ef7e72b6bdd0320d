/**
 * core/stream/write-canvas.ts: a react.write call's arguments JSON, as the model streams it, becomes
 * canvas `delta` events (the content text, in order, from index 0) and, for a JSON file, `attribute`
 * events as each top-level attribute completes — before the arguments are complete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canvasInstance, WriteCanvasStream, type WriteCanvasEvent } from '../../../core/stream/write-canvas';
import { apply, emptyTurn, type LiveTurn } from '../../../apps/web/live';
import { foldAttributes, type AttributeRow } from '../../../store/turn-display-store';

const resolve = (path: string) =>
  path.includes('..')
    ? undefined
    : { path: `fi:turn_1.files/${path}`, mime: path.endsWith('.json') ? 'application/json' : 'text/markdown' };

/** Streams `json` to a fresh streamer in pieces of `size` characters; the events after each piece. */
function run(json: string, size: number): WriteCanvasEvent[][] {
  const s = new WriteCanvasStream(resolve, 3);
  const steps: WriteCanvasEvent[][] = [];
  for (let i = 0; i < json.length; i += size) steps.push(s.push(json.slice(i, i + size)));
  steps.push(s.end());
  return steps;
}

const deltas = (events: WriteCanvasEvent[]) =>
  events.flatMap((e) =>
    e.kind === 'delta' ? [e.payload as { text: string; index: number; completed?: boolean }] : [],
  );
const text = (events: WriteCanvasEvent[]) =>
  deltas(events)
    .map((d) => d.text)
    .join('');

test('canvases stream as they are written: a Markdown canvas goes out piece by piece before the call is complete', () => {
  const content = '# Report\n\nLine one — "quoted", tab\tand \\ backslash.\n\n- é ✓ 😀\n';
  const json = JSON.stringify({ path: 'report.md', channel: 'canvas', content, kind: 'display' });
  const steps = run(json, 3);
  const all = steps.flat();
  assert.equal(text(all), content, 'the deltas add up to the content, escapes decoded');
  const d = deltas(all);
  assert.deepEqual(
    d.map((x) => x.index),
    d.map((_, i) => i),
    'indexes count from 0',
  );
  assert.equal(d.at(-1)!.completed, true);
  assert.ok(d.length > 5, `many pieces (${d.length})`);
  // Half of the arguments in, a prefix of the content is out already.
  const half = steps.slice(0, Math.floor(steps.length / 2)).flat();
  assert.ok(text(half).length > 0 && content.startsWith(text(half)), `streamed early: ${JSON.stringify(text(half))}`);
  const first = all.find((e) => e.kind === 'delta')!;
  assert.deepEqual(
    { ...first.payload, text: undefined },
    {
      text: undefined,
      round: 3,
      target: 'canvas',
      path: 'fi:turn_1.files/report.md',
      mime: 'text/markdown',
      index: 0,
    },
  );
});

test('canvases stream as they are written: a JSON widget gets each top-level attribute as it completes', () => {
  const widget = { title: 'Sales', total: 1234.5, rows: [{ q: 'Q1', v: 1 }], note: 'done "ok"' };
  const content = JSON.stringify(widget, null, 2);
  const json = JSON.stringify({ path: 'sales.json', channel: 'canvas', content });
  const steps = run(json, 4);
  const attrs = steps.flat().filter((e) => e.kind === 'attribute');
  assert.deepEqual(
    attrs.map((e) => [e.payload.key, e.payload.value]),
    Object.entries(widget),
  );
  assert.ok(
    attrs.every((e) => e.instance === canvasInstance('fi:turn_1.files/sales.json')),
    'one composite instance per path',
  );
  assert.deepEqual(
    attrs.map((e) => e.payload.first === true),
    [true, false, false, false],
  );
  // The first attribute is out long before the arguments end.
  const at = steps.findIndex((s) => s.some((e) => e.kind === 'attribute'));
  assert.ok(at > 0 && at < steps.length / 2, `title streamed at step ${at} of ${steps.length}`);
  assert.equal(text(steps.flat()), content);
});

test('a write to the internal channel, or to a path the tool refuses, shows nothing', () => {
  for (const args of [
    { path: 'a.md', channel: 'internal', content: 'secret' },
    { path: '../x.md', channel: 'canvas', content: 'nope' },
    { path: 'a.md', content: 'no channel: internal' },
  ])
    assert.deepEqual(run(JSON.stringify(args), 2).flat(), [], JSON.stringify(args));
});

test('content written before path and channel is held, then streamed once they are known', () => {
  const json = JSON.stringify({ content: 'early text', channel: 'timeline_text', path: 'late.md' });
  const all = run(json, 5).flat();
  assert.equal(text(all), 'early text');
  assert.equal(deltas(all)[0]!.index, 0);
  assert.equal((all[0]!.payload as { target?: string }).target, 'timeline_text');
});

test('any split of any content streams exactly the content (property)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 1, max: 17 }), (content, size) => {
      const json = JSON.stringify({ path: 'p.md', channel: 'canvas', content });
      assert.equal(text(run(json, size).flat()), content);
    }),
  );
});

/** The live turn after a list of events (offsets 1, 2, …), as the web chat folds them. */
function live(
  events: Array<WriteCanvasEvent | { kind: 'retry'; payload: { round: number; attempt: number } }>,
): LiveTurn {
  let t = emptyTurn();
  events.forEach((e, i) => {
    t = apply(t, { ...e, conversationId: 'c', seq: i + 1, ts: new Date(0).toISOString(), turnId: 'turn_1' });
  });
  return t;
}

test('a retried round replaces the live canvas and its folded widget instead of adding to them', () => {
  const first = JSON.stringify({ path: 'w.json', channel: 'canvas', content: '{"a": 1, "stale": 2, "b": 3}' });
  const second = JSON.stringify({ path: 'w.json', channel: 'canvas', content: '{"a": 10, "b": 30}' });
  // Attempt 1 is cut two thirds through; attempt 2 streams the whole call.
  const cut = run(first.slice(0, Math.floor((first.length * 2) / 3)), 3).flat();
  const retried = run(second, 3).flat();
  const t = live([...cut, ...retried]);
  assert.equal(t.canvases.length, 1);
  assert.equal(t.canvases[0]!.key, 'fi:turn_1.files/w.json');
  assert.equal(t.canvases[0]!.text, '{"a": 10, "b": 30}');
  assert.deepEqual(t.canvases[0]!.attributes, [
    ['a', 10],
    ['b', 30],
  ]);
  const rows: AttributeRow[] = [...cut, ...retried].flatMap((e, i) =>
    e.kind === 'attribute' ? [{ seq: i + 1, turn_id: 'turn_1', instance: e.instance ?? 0, payload: e.payload }] : [],
  );
  const folded = foldAttributes([], rows);
  assert.equal(folded.length, 1);
  assert.deepEqual(
    [...folded[0]!.attrs],
    [
      ['a', 10],
      ['b', 30],
    ],
  );
});

test('canvasInstance is stable per path, positive and spreads paths apart', () => {
  assert.equal(canvasInstance('fi:turn_1.files/a.json'), canvasInstance('fi:turn_1.files/a.json'));
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const n = canvasInstance(`fi:turn_1.files/w${i}.json`);
    assert.ok(Number.isInteger(n) && n > 0 && n <= 0x7fffffff);
    seen.add(n);
  }
  assert.equal(seen.size, 2000);
});

test("a retried round whose new attempt writes no canvas drops what the earlier attempt showed; a tool's canvas stays", () => {
  const cut = run(JSON.stringify({ path: 'a.md', channel: 'canvas', content: 'never written' }).slice(0, 52), 3).flat();
  const tool: WriteCanvasEvent = {
    kind: 'delta',
    channel: 'canvas',
    payload: {
      text: 'stored',
      index: 0,
      path: 'fi:turn_1.files/b.md',
      mime: 'text/markdown',
      callId: 'tc_1',
      round: 2,
    },
  };
  const before = live([tool, ...cut]);
  assert.deepEqual(
    before.canvases.map((c) => c.key),
    ['fi:turn_1.files/b.md', 'fi:turn_1.files/a.md'],
  );
  const after = live([tool, ...cut, { kind: 'retry', payload: { round: 3, attempt: 2 } }]);
  assert.deepEqual(
    after.canvases.map((c) => [c.key, c.text]),
    [['fi:turn_1.files/b.md', 'stored']],
  );
});
