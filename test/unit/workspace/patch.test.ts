/** react.patch's pure edit logic: exact-context diffs, count normalisation, mismatch diagnostics, number prefixes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyUnifiedDiff,
  isUnifiedDiff,
  lineNumberPrefixed,
  normalizeHunkCounts,
} from '../../../core/workspace/patch';

const SOURCE = ['def add(a, b):', '    return a + b', '', 'def sub(a, b):', '    return a - b', ''].join('\n');

test('isUnifiedDiff: ---, +++ and @@ starts (after whitespace); anything else is a replacement', () => {
  assert.ok(isUnifiedDiff('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'));
  assert.ok(isUnifiedDiff('\n@@ -1 +1 @@\n-a\n+b'));
  assert.ok(isUnifiedDiff('+++ b/x'));
  assert.ok(!isUnifiedDiff('def add(a, b):\n    return a + b\n'));
  assert.ok(!isUnifiedDiff('- a bullet list\n- item'));
});

test('a hunk with exact context applies; stats count hunks and lines', () => {
  const patch =
    '--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,3 @@\n def sub(a, b):\n-    return a - b\n+    """Subtract."""\n+    return a - b\n';
  const r = applyUnifiedDiff(SOURCE, patch);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.text, SOURCE.replace('def sub(a, b):\n', 'def sub(a, b):\n    """Subtract."""\n'));
  assert.deepEqual([r.hunks, r.added, r.removed], [1, 2, 1]);
});

test('wrong hunk counts written by a model are normalised from the hunk body', () => {
  const patch = '@@ -1,7 +1,9 @@\n def add(a, b):\n-    return a + b\n+    return b + a\n';
  assert.equal(normalizeHunkCounts(patch).split('\n')[0], '@@ -1,2 +1,2 @@');
  const r = applyUnifiedDiff(SOURCE, patch);
  assert.ok(r.ok);
  assert.match(r.text, /return b \+ a/);
});

test('a hunk written against the wrong line number still applies where its exact context is', () => {
  const r = applyUnifiedDiff(SOURCE, '@@ -1,2 +1,2 @@\n def sub(a, b):\n-    return a - b\n+    return a - b - 0\n');
  assert.ok(r.ok);
  assert.match(r.text, /a - b - 0/);
});

test('two hunks apply in order; a blank context line stripped of its space still counts', () => {
  const patch =
    '@@ -1,3 +1,3 @@\n def add(a, b):\n-    return a + b\n\n@@ -4,2 +4,2 @@\n def sub(a, b):\n-    return a - b\n+    return -(b - a)\n';
  const r = applyUnifiedDiff(
    SOURCE,
    patch.replace('-    return a + b\n\n', '-    return a + b\n+    return b + a\n\n'),
  );
  assert.ok(r.ok, JSON.stringify(r));
  assert.match(r.text, /return b \+ a/);
  assert.match(r.text, /return -\(b - a\)/);
});

test('a context mismatch is hunk_mismatch with the line, what was expected and a read range', () => {
  const r = applyUnifiedDiff(SOURCE, '@@ -4,2 +4,2 @@\n def sub(x, y):\n-    return x - y\n+    return y - x\n');
  assert.ok(!r.ok);
  assert.equal(r.code, 'hunk_mismatch');
  assert.equal(r.mismatch_diagnostic!.hunk, 1);
  assert.equal(r.mismatch_diagnostic!.expected_at_line, 4);
  assert.equal(r.mismatch_diagnostic!.expected, 'def sub(x, y):');
  assert.equal(r.mismatch_diagnostic!.actual, 'def sub(a, b):');
  assert.deepEqual(r.suggested_read, { line_start: 1, line_count: 5 });
  assert.match(r.message, /line 4 is "def sub\(a, b\):"/);
});

test('the second hunk failing is named; context found elsewhere is reported', () => {
  const src = 'a\nb\nc\nd\ne\nf\nX\ng\n';
  const r = applyUnifiedDiff(src, '@@ -1,1 +1,1 @@\n-a\n+A\n@@ -6,2 +6,2 @@\n f\n-Y\n+Z\n');
  assert.ok(!r.ok);
  assert.equal(r.mismatch_diagnostic!.hunk, 2);
  assert.equal(r.mismatch_diagnostic!.expected, 'Y');
  assert.equal(r.mismatch_diagnostic!.actual, 'X');
  assert.deepEqual(r.mismatch_diagnostic!.found_elsewhere_at, [6]);
});

test('a hunk past the end of the file says so', () => {
  const r = applyUnifiedDiff('one\n', '@@ -5,1 +5,1 @@\n-five\n+FIVE\n');
  assert.ok(!r.ok);
  assert.match(r.message, /past the end of the file/);
});

test('line-number prefixes copied from a numbered read are refused, in a diff and in text', () => {
  const r = applyUnifiedDiff(
    SOURCE,
    '@@ -1,2 +1,2 @@\n-     1\tdef add(a, b):\n-     2\t    return a + b\n+     1\tdef add(b, a):\n+     2\t    return a + b\n',
  );
  assert.ok(!r.ok);
  assert.equal(r.code, 'line_number_prefixes');
  assert.deepEqual(lineNumberPrefixed(['     1\tdef f():', '     2\t    pass', '     3\t']), [1, 2, 3]);
  assert.deepEqual(lineNumberPrefixed(['12: first', '13: second']), [1, 2]);
  assert.deepEqual(lineNumberPrefixed(['x = 1', 'y = 2', '3\tz']), [], 'a minority is not a copied preview');
  assert.deepEqual(lineNumberPrefixed(['2024 was a year']), []);
});

test('garbage diffs and multi-file diffs are invalid_patch with a reason', () => {
  const none = applyUnifiedDiff(SOURCE, '--- a/x\n+++ b/x\n');
  assert.ok(!none.ok);
  assert.equal(none.code, 'invalid_patch');
  assert.match(none.message, /no hunks/);
  const two = applyUnifiedDiff(
    SOURCE,
    '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n',
  );
  assert.ok(!two.ok);
  assert.match(two.message, /touches 2 files/);
});

test('a pure insertion into an empty file and at the end', () => {
  const r = applyUnifiedDiff('', '@@ -0,0 +1,2 @@\n+first\n+second\n');
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.text, 'first\nsecond\n');
  const end = applyUnifiedDiff('a\nb\n', '@@ -2,1 +2,2 @@\n b\n+c\n');
  assert.ok(end.ok);
  assert.equal(end.text, 'a\nb\nc\n');
});
