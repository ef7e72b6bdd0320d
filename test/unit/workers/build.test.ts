/**
 * The compiled worker (workers/build.ts): built from the sources, rebuilt when one of them changed,
 * and free of `__dirname` except where the project root is found (every module in the bundle shares
 * one `__dirname`, so a path built from it would point into dist/).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildWorker, ensureWorkerBuild, workerBuildIsStale, WORKER_DIST, WORKER_JS } from '../../../workers/build';
import { PROJECT_ROOT, projectFile } from '../../../store/project-files';

test('the build holds the worker and every file it imports, and is fresh right after', () => {
  const files = buildWorker();
  assert.ok(files > 100, `${files} source files`);
  assert.equal(workerBuildIsStale(), false);
  const code = readFileSync(WORKER_JS, 'utf8');
  assert.match(code, /\[worker\] polling/);
  const uses = code.match(/\b__dirname\b/g) ?? [];
  assert.equal(uses.length, 1, 'only store/project-files.ts may read __dirname');
  assert.match(code, /findRoot\(__dirname\)/);
});

test('a changed source makes the build stale, and ensureWorkerBuild rebuilds it', () => {
  ensureWorkerBuild();
  const inputsFile = join(WORKER_DIST, 'worker.inputs.json');
  const inputs = JSON.parse(readFileSync(inputsFile, 'utf8')) as { hashes: Record<string, string> };
  assert.ok(inputs.hashes['workers/main.ts'], 'workers/main.ts is an input');
  // As if workers/main.ts had changed since the build.
  writeFileSync(inputsFile, JSON.stringify({ ...inputs, hashes: { ...inputs.hashes, 'workers/main.ts': 'old' } }));
  assert.equal(workerBuildIsStale(), true);
  assert.equal(ensureWorkerBuild(), WORKER_JS);
  assert.equal(workerBuildIsStale(), false);
});

test('the compiled worker runs: with nothing to connect to it exits 1 and says why', () => {
  ensureWorkerBuild();
  const run = spawnSync(process.execPath, [WORKER_JS], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      DREACT_EXEC_BACKEND: 'off',
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /\[worker\] fatal: .*(ECONNREFUSED|connect|transport)/is);
});

test('project files resolve from the project root, wherever the code runs from', () => {
  assert.equal(JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).name, 'durable-react');
  const first = readdirSync(projectFile('migrations')).sort()[0]!;
  assert.match(readFileSync(projectFile('migrations', first), 'utf8'), /\S/);
});
