import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '..', '..', '..');

test('workflows/ passes the determinism lint', async () => {
  const eslint = new ESLint({ cwd: root });
  const results = await eslint.lintFiles(['workflows/**/*.ts']);
  const errors = results.flatMap((r) =>
    r.messages.filter((m) => m.severity === 2).map((m) => `${r.filePath}:${m.line} ${m.message}`),
  );
  assert.deepEqual(errors, []);
});

const violations: Array<[string, RegExp]> = [
  ["import { readFileSync } from 'node:fs';\nexport const x = readFileSync;", /no node: modules/],
  ["import { Pool } from 'pg';\nexport const x = Pool;", /must not import I\/O libraries/],
  ["import Anthropic from '@anthropic-ai/sdk';\nexport const x = Anthropic;", /must not import I\/O libraries/],
  ["import { ECSClient } from '@aws-sdk/client-ecs';\nexport const x = ECSClient;", /must not import I\/O libraries/],
  ['export const t = Date.now();', /not Date\.now/],
  ['export const r = Math.random();', /not Math\.random/],
  ['export const d = new Date();', /reads the wall clock/],
  ['setTimeout(() => undefined, 10);', /Use sleep\(\)/],
  ['export const e = process.env.X;', /No process access/],
  ["export const f = fetch('http://x');", /No I\/O/],
];

for (const [code, message] of violations) {
  test(`the determinism lint rejects: ${code.split('\n').pop()}`, async () => {
    const eslint = new ESLint({ cwd: root });
    const [result] = await eslint.lintText(code, { filePath: join(root, 'workflows', 'violation.ts') });
    const messages = result!.messages.map((m) => m.message);
    assert.ok(
      messages.some((m) => message.test(m)),
      `expected ${message} in ${JSON.stringify(messages)}`,
    );
  });
}

test('type-only imports of activity signatures stay allowed', async () => {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(
    "import type { TurnActivities } from '../activities/turn-activities';\nexport type A = TurnActivities;",
    { filePath: join(root, 'workflows', 'ok.ts') },
  );
  assert.deepEqual(
    result!.messages.filter((m) => m.severity === 2),
    [],
  );
});
