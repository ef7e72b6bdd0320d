import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  isStorableText,
  jsonForPostgres,
  normaliseDeep,
  normaliseText,
  REPLACEMENT_CHAR,
  textProblem,
} from '../../../core/text';
import { StartTurnRequestSchema, TextInputSchema, UserEventSchema } from '../../../core/turn/contracts';

test('textProblem names a NUL, a control character and a lone surrogate with their position', () => {
  assert.match(textProblem('a\u0000b')!, /NUL character \(U\+0000\) at position 1/);
  assert.match(textProblem('ab\u0007')!, /control character U\+0007 at position 2/);
  assert.match(textProblem('x\u001b[31m')!, /U\+001B/);
  assert.match(textProblem('\ud800')!, /lone UTF-16 surrogate \(U\+D800\) at position 0/);
  assert.match(textProblem('a\udc00')!, /lone UTF-16 surrogate \(U\+DC00\) at position 1/);
  assert.match(textProblem('a\ud83dz')!, /U\+D83D/);
});

test('textProblem accepts tab, newline, carriage return, paired surrogates and any visible script', () => {
  for (const ok of ['a\tb\nc\r\n', 'emoji 😀 ok', '日本語', 'ﷺ', 'é (e + combining acute: e\u0301)', 'a\u200Bb'])
    assert.equal(textProblem(ok), undefined, JSON.stringify(ok));
});

test('textProblem refuses text made only of invisible characters unless told otherwise', () => {
  for (const blank of [
    '',
    '   ',
    '\n\t',
    '\u200B\u200C\u200D',
    '\uFEFF',
    '\u2060\u00AD',
    '\u3164',
    '\u2800',
    '\u3000 ',
  ])
    assert.match(textProblem(blank)!, /is empty/, JSON.stringify(blank));
  assert.equal(textProblem('\u200B', { visible: false }), undefined);
  assert.equal(textProblem('', { visible: false }), undefined);
});

test('normaliseText replaces NUL and lone surrogates with U+FFFD and keeps everything else', () => {
  assert.equal(normaliseText('a\u0000b'), `a${REPLACEMENT_CHAR}b`);
  assert.equal(normaliseText('\ud800x\udc00'), `${REPLACEMENT_CHAR}x${REPLACEMENT_CHAR}`);
  assert.equal(normaliseText('😀\u0007\u001b'), '😀\u0007\u001b');
  const s = 'plain text';
  assert.equal(normaliseText(s), s);
});

test('normaliseText: the result is always storable, and storable text is unchanged (property)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const n = normaliseText(s);
      assert.equal(isStorableText(n), true);
      assert.equal(n.length, s.length);
      if (isStorableText(s)) assert.equal(n, s);
      assert.equal((n as unknown as { isWellFormed(): boolean }).isWellFormed(), true);
    }),
  );
});

test('normaliseDeep walks arrays and objects (keys too) and returns the same value when clean', () => {
  const clean = { a: ['x', 1, null, { b: true }] };
  assert.equal(normaliseDeep(clean), clean);
  const dirty = { 'k\u0000': ['ok', 'n\u0000'], nested: { t: '\ud800' }, n: 1 };
  assert.deepEqual(normaliseDeep(dirty), {
    [`k${REPLACEMENT_CHAR}`]: ['ok', `n${REPLACEMENT_CHAR}`],
    nested: { t: REPLACEMENT_CHAR },
    n: 1,
  });
  assert.equal(dirty.nested.t, '\ud800', 'the input is not mutated');
});

test('jsonForPostgres never emits the escapes Postgres refuses, and keeps a literal backslash-u0000', () => {
  const json = jsonForPostgres({ text: 'a\u0000b', lone: 'x\udbff', pair: '😀', literal: '\\u0000' });
  assert.doesNotMatch(json, /(^|[^\\])(\\\\)*\\u0000/);
  assert.doesNotMatch(json, /\\ud[89a-f]/i);
  assert.deepEqual(JSON.parse(json), {
    text: `a${REPLACEMENT_CHAR}b`,
    lone: `x${REPLACEMENT_CHAR}`,
    pair: '😀',
    literal: '\\u0000',
  });
  assert.equal(jsonForPostgres({ a: 1 }), '{"a":1}');
});

test('TextInputSchema refuses bad user text with a message naming the field', () => {
  const prompt = TextInputSchema(100, 'prompt');
  for (const [bad, why] of [
    ['a\u0000b', /prompt contains a NUL/],
    ['\ud800', /prompt contains a lone UTF-16 surrogate/],
    ['a\u0008', /prompt contains the control character U\+0008/],
    ['\u200B \u200B', /prompt is empty/],
  ] as const) {
    const r = prompt.safeParse(bad);
    assert.equal(r.success, false);
    assert.match(r.error!.issues[0]!.message, why);
  }
  assert.equal(prompt.safeParse('fine\n').success, true);
});

test('the turn request and user event contracts carry the rules (prompt, text, attachment name)', () => {
  const base = { conversationId: 'c1', messageId: 'm1', prompt: 'hi' };
  const bad = StartTurnRequestSchema.safeParse({ ...base, prompt: 'a\u0000' });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['prompt']);
  const ev = UserEventSchema.safeParse({ kind: 'steer', messageId: 'm2', text: 'stop\ud800' });
  assert.equal(ev.success, false);
  assert.deepEqual(ev.error!.issues[0]!.path, ['text']);
  const att = StartTurnRequestSchema.safeParse({
    ...base,
    attachments: [
      { name: 'a\u0000.txt', mime: 'text/plain', kind: 'text', sizeBytes: 1, sha256: '0'.repeat(64), uploadKey: 'k' },
    ],
  });
  assert.equal(att.success, false);
  assert.match(att.error!.issues[0]!.message, /attachment name contains a NUL/);
});
