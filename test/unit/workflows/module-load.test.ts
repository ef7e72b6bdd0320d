/**
 * Issue 42: module evaluation is per workflow instance in the reusable V8 context (the SDK shares
 * only the preloaded modules, workflows/preload.ts), so a zod schema built at a module's top level
 * is built again in every turn and persist child a worker starts. The modules those two workflows
 * load build none (a schema they need at run time is required where it is used, as the turn's
 * cancel handler does).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/** A top-level `const X = z.…` (a schema built when the module is evaluated). */
const TOP_LEVEL_SCHEMA = /^(?:export )?const \w+(?::[^=\n]+)? =\s*z\s*\.\s*\w+/m;

function loadedBy(entries: string[]): string[] {
  const script = `${entries.map((e) => `require(${JSON.stringify(join(root, e))});`).join('')}
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as string[]).filter((f) => !f.includes('node_modules') && f.endsWith('.ts'));
}

test('the turn and persist workflows load no module that builds a zod schema at its top level', () => {
  const loaded = loadedBy(['workflows/turn/index.ts', 'workflows/persist.ts']);
  assert.ok(
    loaded.some((f) => f.endsWith(join('workflows', 'turn', 'run.ts'))),
    'the turn run was loaded',
  );
  const building = loaded.filter((f) => TOP_LEVEL_SCHEMA.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(building, []);
});

test('the check sees a schema module', () => {
  assert.ok(TOP_LEVEL_SCHEMA.test(readFileSync(join(root, 'core', 'turn', 'cancellation.ts'), 'utf8')));
  assert.ok(TOP_LEVEL_SCHEMA.test(readFileSync(join(root, 'core', 'model', 'provider.ts'), 'utf8')));
});
