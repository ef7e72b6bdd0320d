import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerLinks } from '../../../apps/cli/render-links';

const whole = (chunks: string[], links = new AnswerLinks()) =>
  chunks.map((c) => links.push(c)).join('') + links.flush();

test('markdown links become numbered references listed at the end', () => {
  const links = new AnswerLinks();
  const out = whole(
    ['See [Node docs](https://nodejs.org/api) and [Node docs](https://nodejs.org/api), also [x\\]y](http://e.com/a).'],
    links,
  );
  assert.equal(out, 'See Node docs[1] and Node docs[1], also x]y[2].');
  assert.deepEqual(links.sources(), ['[1] Node docs — https://nodejs.org/api', '[2] x]y — http://e.com/a']);
});

test('a link split across chunks is held back until complete; a dangling one is shown as written', () => {
  const links = new AnswerLinks();
  assert.equal(links.push('a [Ti'), 'a ');
  assert.equal(links.push('tle](https://ex'), '');
  assert.equal(links.push('.com) b [c'), 'Title[1] b ');
  assert.equal(links.flush(), '[c');
  assert.equal(whole(['[not a link] and [x](ftp://y)']), '[not a link] and [x](ftp://y)');
});

test('[[S:n]] tokens resolve against known sources', () => {
  const links = new AnswerLinks([{ sid: 1, title: 'One', url: 'https://one.example/' }]);
  assert.equal(whole(['per [[S:', '1]] and [[S:9]]'], links), 'per One[1] and [[S:9]]');
  assert.deepEqual(links.sources(), ['[1] One — https://one.example/']);
});

test('an escaped bracket in a title split across chunks (found by the property below)', () => {
  assert.equal(whole(['[\\[', 'T](https://u.io/p)']), whole(['[\\[T](https://u.io/p)']));
  assert.equal(whole(['[\\[T](https://u.io/p)']), '[T[1]');
});

test('chunking never changes the rendered text', () => {
  const text = fc
    .array(fc.constantFrom('a', ' ', '[', ']', '(', ')', 'https://x.io', '\\', '\n', '[T](https://u.io/p)'), {
      maxLength: 40,
    })
    .map((xs) => xs.join(''));
  fc.assert(
    fc.property(text, fc.array(fc.nat(50), { maxLength: 8 }), (t, cuts) => {
      const points = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b);
      const chunks: string[] = [];
      let at = 0;
      for (const p of points) {
        chunks.push(t.slice(at, p));
        at = p;
      }
      chunks.push(t.slice(at));
      assert.equal(whole(chunks), whole([t]));
    }),
  );
});
