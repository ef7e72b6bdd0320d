/** Which file a person means by the model's name for it (core/workspace/file-ref.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveFileRef } from '../../../core/workspace/file-ref';

const KEYS = [
  'turn_1/files/report.md',
  'turn_1/files/notes/a.md',
  'turn_1/outputs/chart.png',
  'turn_1/attachments/data.csv',
];
const resolve = (input: string, keys = KEYS) => resolveFileRef(input, keys, { conversationId: 'c1' });

test('logical paths (bare, conv:, owner segment of this conversation), storage keys and unique names resolve', () => {
  for (const [input, key] of [
    ['fi:turn_1.files/report.md', 'turn_1/files/report.md'],
    ['conv:fi:turn_1.files/report.md', 'turn_1/files/report.md'],
    ['fi:conv_c1.turn_1.files/report.md', 'turn_1/files/report.md'],
    ['fi:turn_1.outputs/chart.png', 'turn_1/outputs/chart.png'],
    ['fi:turn_1.user.attachments/data.csv', 'turn_1/attachments/data.csv'],
    ['turn_1/files/notes/a.md', 'turn_1/files/notes/a.md'],
    ['  report.md ', 'turn_1/files/report.md'],
    ['notes/a.md', 'turn_1/files/notes/a.md'],
    ['a.md', 'turn_1/files/notes/a.md'],
    ['chart.png', 'turn_1/outputs/chart.png'],
  ] as const)
    assert.deepEqual(resolve(input), { key }, input);
});

test('nothing resolves: one line naming the path, with near matches', () => {
  const typo = resolve('reprot.md');
  assert.deepEqual(typo, {
    error: 'no file "reprot.md" — did you mean fi:turn_1.files/report.md?',
    code: 'not_found',
    near: ['fi:turn_1.files/report.md'],
  });
  const otherTurn = resolve('fi:turn_2.files/report.md');
  assert.ok('error' in otherTurn && otherTurn.code === 'not_found');
  assert.deepEqual(otherTurn.near, ['fi:turn_1.files/report.md']);
  const far = resolve('zzzz');
  assert.ok('error' in far);
  assert.match(far.error, /^no file "zzzz" \(it has 4 files: `dreact files list` shows them\)$/);
  const none = resolve('x.md', []);
  assert.ok('error' in none);
  assert.equal(none.error, 'no file "x.md" (the conversation has no files)');
});

test('malformed or non-file paths are bad input naming the path; ambiguous names list the candidates', () => {
  for (const input of ['fi:turn_1.files/../x', '../etc/passwd', 'ar:turn_1.user.prompt', 'fi:turn_1.git/projects/x']) {
    const r = resolve(input);
    assert.ok('error' in r && r.code === 'bad_input', input);
    assert.ok(r.error.includes(`"${input}"`), r.error);
  }
  const two = resolve('report.md', [...KEYS, 'turn_2/files/report.md']);
  assert.deepEqual(two, {
    error:
      'file path "report.md" is ambiguous: fi:turn_1.files/report.md, fi:turn_2.files/report.md (name one of them)',
    code: 'bad_input',
    near: ['fi:turn_1.files/report.md', 'fi:turn_2.files/report.md'],
  });
});
