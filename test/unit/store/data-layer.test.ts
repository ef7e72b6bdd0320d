/**
 * The data layer is enforced by lint: only store/ writes SQL or uses pg at runtime, and client/
 * never imports activities/ (type-only imports stay allowed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '..', '..', '..');

async function errorsOf(code: string, file: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.severity === 2).map((m) => m.message);
}

test('activities/, client/, workers/, scripts/ and bench/ write no SQL and use pg only for types', async () => {
  const eslint = new ESLint({ cwd: root });
  const results = await eslint.lintFiles([
    'activities/**/*.ts',
    'client/**/*.ts',
    'apps/**/*.ts',
    'workers/**/*.ts',
    'scripts/**/*.ts',
    'bench/**/*.ts',
  ]);
  const errors = results.flatMap((r) =>
    r.messages
      .filter((m) => m.ruleId === 'no-restricted-syntax' || m.ruleId === 'no-restricted-imports')
      .map((m) => `${r.filePath}:${m.line} ${m.message}`),
  );
  assert.deepEqual(errors, []);
});

const violations: Array<[string, string, RegExp]> = [
  [
    'activities/turn/x.ts',
    "declare const db: { query(s: string): void };\ndb.query('SELECT title FROM conversations');",
    /SQL belongs in store\//,
  ],
  [
    'apps/gateway/x.ts',
    'declare const db: { query(s: string): void };\ndb.query(`\n  UPDATE conversations SET title = 1`);',
    /SQL belongs in store\//,
  ],
  ['workers/x.ts', "export const q = 'DELETE FROM stream_events';", /SQL belongs in store\//],
  ['bench/x.ts', "import { Pool } from 'pg';\nexport const p = new Pool();", /Only store\/ uses pg at runtime/],
  [
    'apps/cli/x.ts',
    "import { systemPromptFor } from '../../activities/turn/protocol';\nexport const f = systemPromptFor;",
    /client\/ and apps\/ must not import activities\//,
  ],
];

for (const [file, code, message] of violations) {
  test(`the data-layer lint rejects in ${file}: ${code.split('\n').pop()}`, async () => {
    const messages = await errorsOf(code, file);
    assert.ok(
      messages.some((m) => message.test(m)),
      `expected ${message} in ${JSON.stringify(messages)}`,
    );
  });
}

test('allowed: pg type imports, prose that merely starts with a capital word, SQL inside store/', async () => {
  assert.deepEqual(
    await errorsOf(
      "import type { Pool } from 'pg';\nexport type P = Pool;\nexport const s = 'Update the plan, then SELECT-ively read';",
      'activities/turn/ok.ts',
    ),
    [],
  );
  assert.deepEqual(
    await errorsOf(
      "import type { TurnActivities } from '../../activities/turn-activities';\nexport type A = TurnActivities;",
      'apps/cli/ok.ts',
    ),
    [],
  );
  assert.deepEqual(
    await errorsOf(
      "import type { Pool } from 'pg';\nexport const f = (db: Pool) => db.query('SELECT 1');",
      'store/ok.ts',
    ),
    [],
  );
});
