/**
 * The tree is formatted with Prettier (.prettierrc.json, .prettierignore): the same check
 * `npm run lint` runs, so an unformatted file fails the suite too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';

const root = join(__dirname, '..', '..', '..');

test('every tracked source file is formatted with Prettier', async () => {
  const files = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.mjs', '*.cjs', '*.json'],
    { cwd: root, encoding: 'utf8' },
  )
    .split('\n')
    .filter((f) => f !== '');
  const unformatted: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    const info = await prettier.getFileInfo(path, { ignorePath: join(root, '.prettierignore') });
    if (info.ignored || info.inferredParser === null) continue;
    const options = await prettier.resolveConfig(path);
    if (!(await prettier.check(readFileSync(path, 'utf8'), { ...options, filepath: path }))) unformatted.push(file);
  }
  assert.ok(files.length > 100, `only ${files.length} files found`);
  assert.deepEqual(unformatted, [], 'run `npx prettier --write .`');
});
