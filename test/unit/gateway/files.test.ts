/** Pure parts of hosted files and feedback: byte ranges, disposition names, file keys, ratings, satisfaction. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { contentDisposition, fileKeyOf, parseRange } from '../../../apps/gateway/file-routes';
import { RatingFilterSchema, RatingInputSchema, satisfaction } from '../../../core/feedback/rating';

test('parseRange: spans, suffixes and open ends clamp to the file; past the end is unsatisfiable; others are ignored', () => {
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-200', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange('bytes=50-', 100), { start: 50, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=9-3', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-0', 0), 'unsatisfiable');
  for (const ignored of [undefined, 'bytes=0-1,5-6', 'items=0-1', 'bytes=-', 'bytes=a-b'])
    assert.equal(parseRange(ignored, 100), undefined, String(ignored));
  fc.assert(
    fc.property(fc.nat(10_000), fc.nat(10_000), fc.integer({ min: 1, max: 10_000 }), (a, b, size) => {
      const r = parseRange(`bytes=${a}-${b}`, size);
      if (r === 'unsatisfiable' || r === undefined) return a >= size || b < a;
      return r.start === a && r.end === Math.min(b, size - 1) && r.start <= r.end && r.end < size;
    }),
  );
});

test('contentDisposition: the ASCII fallback has no quotes, controls or path characters; filename* keeps the name', () => {
  fc.assert(
    fc.property(
      fc
        .array(
          fc.oneof(
            fc.constantFrom('\uD800', '\uDC00', '"', '\\', '/', '\r', '\n', '.', ' ', 'é', '\u202E'),
            fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
          ),
          { maxLength: 40 },
        )
        .map((a) => a.join('')),
      (name) => {
        const d = contentDisposition('attachment', name);
        const m = /^attachment; filename="([^"]*)"; filename\*=UTF-8''([A-Za-z0-9%!._~-]*)$/.exec(d);
        if (!m) return false;
        return (
          /^[A-Za-z0-9._ -]+$/.test(m[1]!) &&
          !m[1]!.startsWith('.') &&
          decodeURIComponent(m[2]!).length > 0 === name.length > 0
        );
      },
    ),
  );
});

test('fileKeyOf: one decoding, then a safe workspace path under a turn', () => {
  assert.equal(fileKeyOf('turn_3/outputs/a%20b/c.png'), 'turn_3/outputs/a b/c.png');
  assert.equal(fileKeyOf('turn_3/attachments/%25.txt'), 'turn_3/attachments/%.txt');
  for (const bad of [
    'turn_1/outputs/../x',
    'turn_1/outputs/%2E%2E/x',
    'turn_1/outputs/%252e%252e/x',
    '%2F',
    'turn_1%5Cx',
    'a/b',
  ])
    assert.throws(() => fileKeyOf(bad), /file path/, bad);
});

test('ratings: aliases map to the canonical names, null clears, anything else names the rule', () => {
  assert.equal(RatingInputSchema.parse('up'), 'ok');
  assert.equal(RatingInputSchema.parse('down'), 'not_ok');
  assert.equal(RatingInputSchema.parse('neutral'), 'neutral');
  assert.equal(RatingInputSchema.parse(null), null);
  assert.equal(RatingFilterSchema.parse('up'), 'ok');
  assert.throws(() => RatingInputSchema.parse('meh'), /rating must be/);
  assert.deepEqual(satisfaction({ ok: 3, notOk: 1, neutral: 0 }), { ok: 3, notOk: 1, neutral: 0, rate: 0.75 });
  assert.equal(satisfaction({ ok: 0, notOk: 0, neutral: 0 }).rate, null);
});
