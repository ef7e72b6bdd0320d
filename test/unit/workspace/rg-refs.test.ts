/** react.rg's search and the workspace refs of pull / checkout / ANNOUNCE. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileRegex, searchFiles, type RgFile } from '../../../core/workspace/rg';
import {
  checkoutKey,
  historicalKeyOfPulled,
  logicalOfKey,
  parseHistoricalRef,
  pulledKey,
  refCovers,
  workspaceStateLines,
} from '../../../core/workspace/refs';

const file = (path: string, text: string | undefined): RgFile => ({
  path,
  text,
  sizeBytes: text === undefined ? 10 : Buffer.byteLength(text),
});
const FILES = [
  file('fi:turn_2.files/app/main.py', 'import os\n\ndef main():\n    raise ValueError("bad input")\n'),
  file('fi:turn_2.files/app/util.py', 'def helper():\n    return 42\n'),
  file('fi:turn_2.files/docs/README.md', '# App\nRaises ValueError on bad input.\n'),
  file('fi:turn_2.user.attachments/logo.png', undefined),
];
const DEFAULTS = { contextLines: 0, maxMatches: 200, maxFiles: 200, maxBytes: 1_000_000 };

test('pattern hits carry line, text and a ready react.read item', () => {
  const r = searchFiles(FILES, { ...DEFAULTS, pattern: 'ValueError' });
  assert.deepEqual(
    r.hits.map((h) => [h.path, h.line, h.read_item]),
    [
      ['fi:turn_2.files/app/main.py', 4, { path: 'fi:turn_2.files/app/main.py', line_start: 4, line_count: 1 }],
      ['fi:turn_2.files/docs/README.md', 2, { path: 'fi:turn_2.files/docs/README.md', line_start: 2, line_count: 1 }],
    ],
  );
  assert.deepEqual(r.skipped_binary, ['fi:turn_2.user.attachments/logo.png']);
  assert.equal(r.truncated, undefined);
});

test('context lines widen the read item and are returned before/after', () => {
  const r = searchFiles(FILES, { ...DEFAULTS, pattern: 'raise', contextLines: 2 });
  assert.equal(r.hits.length, 1);
  assert.deepEqual(r.hits[0]!.before, ['', 'def main():']);
  assert.deepEqual(r.hits[0]!.after, []);
  assert.deepEqual(r.hits[0]!.read_item, { path: 'fi:turn_2.files/app/main.py', line_start: 2, line_count: 3 });
});

test('name_regex matches base names only; alone it lists files', () => {
  const r = searchFiles(FILES, { ...DEFAULTS, nameRegex: '\\.py$' });
  assert.deepEqual(
    r.hits.map((h) => h.path),
    ['fi:turn_2.files/app/main.py', 'fi:turn_2.files/app/util.py'],
  );
  assert.equal(searchFiles(FILES, { ...DEFAULTS, nameRegex: '^app' }).hits.length, 0, 'folders are not names');
  const both = searchFiles(FILES, { ...DEFAULTS, nameRegex: '\\.py$', pattern: 'def ' });
  assert.equal(both.hits.length, 2);
});

test('caps: max_matches, max_files and max_bytes stop the search and say which', () => {
  const m = searchFiles(FILES, { ...DEFAULTS, pattern: '.', maxMatches: 3 });
  assert.equal(m.hits.length, 3);
  assert.equal(m.truncated, 'max_matches');
  const f = searchFiles(FILES, { ...DEFAULTS, pattern: 'x', maxFiles: 1 });
  assert.equal(f.files_scanned, 1);
  assert.equal(f.truncated, 'max_files');
  const b = searchFiles(FILES, { ...DEFAULTS, pattern: 'ValueError', maxBytes: 70 });
  assert.equal(b.truncated, 'max_bytes');
  assert.equal(b.hits.length, 1);
  assert.ok(b.bytes_scanned <= 70);
});

test('regexes: (?i) inline flag, invalid patterns are a clear error', () => {
  assert.ok(compileRegex('(?i)valueerror', 'pattern').test('ValueError'));
  assert.throws(() => compileRegex('(unclosed', 'pattern'), /pattern: invalid regular expression "\(unclosed"/);
  assert.throws(() => searchFiles(FILES, { ...DEFAULTS, nameRegex: '[' }), /name_regex: invalid/);
});

test('historical refs: files subtrees, exact outputs / attachments, whole trees, refusals', () => {
  const sub = parseHistoricalRef('fi:turn_1.files/app', 'turn_3', ['files']);
  assert.deepEqual([sub.key, sub.subtree, sub.area], ['turn_1/files/app', true, 'files']);
  assert.ok(refCovers(sub, 'turn_1/files/app/main.py'));
  assert.ok(refCovers(sub, 'turn_1/files/app'));
  assert.ok(!refCovers(sub, 'turn_1/files/application.py'), 'a subtree is a folder, not a name prefix');
  const whole = parseHistoricalRef('conv:fi:turn_1.files', 'turn_3', ['files']);
  assert.equal(whole.key, 'turn_1/files/');
  assert.ok(refCovers(whole, 'turn_1/files/a/b.txt'));
  assert.ok(!refCovers(whole, 'turn_1/outputs/a.txt'));
  const out = parseHistoricalRef('fi:turn_1.outputs/report.md', 'turn_3', ['files', 'outputs']);
  assert.ok(!out.subtree);
  assert.ok(!refCovers(out, 'turn_1/outputs/report.md/x'));
  const att = parseHistoricalRef('fi:turn_1.user.attachments/data.csv', 'turn_3', ['attachments']);
  assert.equal(att.key, 'turn_1/attachments/data.csv');
  assert.throws(() => parseHistoricalRef('fi:turn_1.outputs/r.md', 'turn_3', ['files']), /only fi:<turn>\.files/);
  assert.throws(() => parseHistoricalRef('fi:turn_3.files/a', 'turn_3', ['files']), /current turn's own workspace/);
  assert.throws(() => parseHistoricalRef('tc:turn_1.c1.result', 'turn_3', ['files']), /not a workspace ref/);
  assert.throws(() => parseHistoricalRef('fi:turn_1.files/../x', 'turn_3', ['files']));
});

test('keys: pulled, checkout targets, logical forms', () => {
  assert.equal(pulledKey('turn_3', 'turn_1/files/a.py'), 'turn_3/pulled/turn_1/files/a.py');
  assert.equal(historicalKeyOfPulled('turn_3', 'turn_3/pulled/turn_1/files/a.py'), 'turn_1/files/a.py');
  assert.equal(historicalKeyOfPulled('turn_3', 'turn_3/files/a.py'), undefined);
  assert.equal(checkoutKey('turn_3', 'turn_1/files/app/a.py'), 'turn_3/files/app/a.py');
  assert.throws(() => checkoutKey('turn_3', 'turn_1/outputs/a.py'), /only files\//);
  assert.equal(logicalOfKey('turn_1/attachments/x.png'), 'fi:turn_1.user.attachments/x.png');
  assert.equal(logicalOfKey('turn_1/outputs/r.md'), 'fi:turn_1.outputs/r.md');
});

test('ANNOUNCE workspace lines: scopes, provenance, outputs, pulled refs; empty workspace hint', () => {
  assert.match(workspaceStateLines('turn_3', [])[0]!, /empty — react\.write creates files; react\.checkout/);
  const lines = workspaceStateLines('turn_3', [
    { key: 'turn_3/files/app/main.py', sizeBytes: 40, checkedOutFrom: 'fi:turn_1.files/app/main.py' },
    { key: 'turn_3/files/app/new.py', sizeBytes: 5 },
    { key: 'turn_3/files/notes.md', sizeBytes: 9, checkedOutFrom: 'fi:turn_2.files/notes.md' },
    { key: 'turn_3/outputs/report.md', sizeBytes: 100 },
    { key: 'turn_3/pulled/turn_1/files/old.py', sizeBytes: 7 },
  ]);
  assert.equal(lines[0], 'current workspace (files/): 3 file(s) in 2 scope(s)');
  assert.match(
    lines[1]!,
    /^scope app: fi:turn_3\.files\/app\/main\.py \(40 B, from fi:turn_1\.files\/app\/main\.py\); fi:turn_3\.files\/app\/new\.py \(5 B, written this turn\) \[turns: turn_1, turn_3\]$/,
  );
  assert.match(lines[2]!, /^scope \(root\): .*from fi:turn_2\.files\/notes\.md.*\[turns: turn_2\]$/);
  assert.equal(lines[3], 'outputs/: fi:turn_3.outputs/report.md (100 B)');
  assert.match(lines[4]!, /^pulled read-only .*: fi:turn_1\.files\/old\.py$/);
});
