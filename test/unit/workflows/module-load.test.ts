/**
 * Issue 42: module evaluation is per workflow instance in the reusable V8 context (the SDK shares
 * only the preloaded modules, workflows/preload.ts), so a zod schema built at a module's top level
 * is built again in every workflow instance a worker starts (every turn, every persist child): the
 * bundle's entry, workflows/index.ts, is evaluated whole for each. The modules it loads build none
 * (a schema a workflow needs at run time is required where it is used, as the turn's cancel
 * handler and the conversation's startTurn validator do).
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

test('the workflow bundle loads no module that builds a zod schema at its top level', () => {
  const loaded = loadedBy(['workflows/index.ts']);
  assert.ok(
    loaded.some((f) => f.endsWith(join('workflows', 'turn', 'run.ts'))),
    'the turn run was loaded',
  );
  const building = loaded.filter((f) => TOP_LEVEL_SCHEMA.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(building, []);
});

test('the check sees a schema module', () => {
  assert.ok(TOP_LEVEL_SCHEMA.test(readFileSync(join(root, 'core', 'turn', 'cancellation.ts'), 'utf8')));
  assert.ok(TOP_LEVEL_SCHEMA.test(readFileSync(join(root, 'core', 'model', 'usage-schema.ts'), 'utf8')));
});
