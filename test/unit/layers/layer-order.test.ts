/**
 * The layer order is held by lint (eslint.config.mjs: layers/order): core < store < contract <
 * client < activities < workflows, workers < apps. Each boundary is crossed upwards by a synthetic
 * file, and every form of import counts — type-only ones included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '..', '..', '..');
const eslint = new ESLint({ cwd: root });

async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'layers/order').map((m) => m.message);
}

/** [importing file, the module it names] — each one floor (or one folder beside) too high. */
const upwards: Array<[string, string]> = [
  ['core/timeline/x.ts', '../../store/db'],
  ['store/x.ts', '../contract/definitions'],
  ['contract/x.ts', '../client/api'],
  ['client/x.ts', '../activities/deps'],
  ['client/temporal/x.ts', '../../workflows/turn'],
  ['activities/turn/x.ts', '../../workflows/turn'],
  ['activities/x.ts', '../workers/worker'],
  ['workflows/x.ts', '../workers/worker'],
  ['workflows/x.ts', '../apps/gateway/app'],
  ['workers/x.ts', '../apps/cli/main'],
  ['core/x.ts', '../apps/web/api'],
];

for (const [file, spec] of upwards) {
  const from = file.split('/')[0];
  const to = spec.split('/').find((s) => s !== '..' && s !== '.');
  test(`layers/order rejects ${from}/ importing ${to}/, a type-only import too`, async () => {
    const value = await layerErrors(file, `import { x } from '${spec}';\nexport const y = x;`);
    assert.equal(value.length, 1, JSON.stringify(value));
    assert.match(value[0]!, new RegExp(`^${from}/ may not import ${to}/`));
    const typeOnly = await layerErrors(file, `import type { X } from '${spec}';\nexport type Y = X;`);
    assert.equal(typeOnly.length, 1, JSON.stringify(typeOnly));
  });
}

test('layers/order reads every form of import', async () => {
  const forms = [
    "export { x } from '../apps/cli/main';",
    "export * from '../apps/cli/main';",
    "export type T = import('../apps/cli/main').Main;",
    "export const m = () => import('../apps/cli/main');",
    "export const m = require('../apps/cli/main');",
    "import m = require('../apps/cli/main');\nexport const n = m;",
  ];
  for (const code of forms) assert.equal((await layerErrors('workers/x.ts', code)).length, 1, code);
});

test('store/ may not import @temporalio (type-only neither)', async () => {
  const errors = await layerErrors(
    'store/x.ts',
    "import type { Client } from '@temporalio/client';\nexport type C = Client;",
  );
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /store\/ is SQL only/);
});

test('allowed: down the layers, inside a folder, workers/ hosting workflows/, outside the layers', async () => {
  const allowed: Array<[string, string]> = [
    ['apps/cli/x.ts', "import { main } from '../../workers/main';"],
    ['apps/gateway/x.ts', "import type { T } from '../../activities/deps';"],
    ['workers/x.ts', "import { TurnWorkflow } from '../workflows/turn';"],
    ['activities/x.ts', "import { DreactClient } from '../client/api';"],
    ['client/x.ts', "import { startTurnUpdate } from '../contract/definitions';"],
    ['contract/x.ts', "import type { PurgeCounts } from '../store/purge-store';"],
    ['store/x.ts', "import { Block } from '../core/timeline/block';"],
    ['core/a/x.ts', "import { y } from '../b/y';"],
    ['test/unit/x.test.ts', "import { main } from '../../apps/cli/main';"],
    ['client/x.ts', "import { Client } from '@temporalio/client';"],
  ];
  for (const [file, code] of allowed) assert.deepEqual(await layerErrors(file, `${code}\nexport {};`), [], file);
});
