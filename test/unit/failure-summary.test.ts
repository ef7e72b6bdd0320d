import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { failureSummary } from '../../scripts/failure-summary';

test('failure summary: nothing when all passed; else one line per failure, paths relative to the root', () => {
  assert.deepEqual(failureSummary(''), []);
  const jsonl =
    JSON.stringify({ file: '/r/test/unit/a.test.ts', name: 'adds', nesting: 0, error: 'AssertionError: 1\n !== 2' }) +
    '\n';
  assert.deepEqual(failureSummary(jsonl, '/r'), [
    '# 1 failed (tests and the suites or files holding them):',
    '# FAILED test/unit/a.test.ts › adds: AssertionError: 1 !== 2',
  ]);
});

test('a file that fails outside its tests is named with its exit code and its last lines of output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-failrep-'));
  try {
    // Every test passes; after them the process exits non-zero (a late error, a killed child).
    const file = join(dir, 'late.test.mjs');
    writeFileSync(
      file,
      [
        "import { test, after } from 'node:test';",
        "test('passes', () => {});",
        "after(() => { console.error('closing the worker: pool is draining'); setTimeout(() => process.exit(7), 50); });",
      ].join('\n'),
    );
    const out = join(dir, 'failures.jsonl');
    const run = spawnSync(
      process.execPath,
      [
        '--test',
        '--test-reporter=tap',
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(__dirname, '..', '..', 'scripts', 'failures-reporter.mjs')}`,
        `--test-reporter-destination=${out}`,
        file,
      ],
      // Not as this runner's child: without NODE_TEST_CONTEXT it runs its own file and reporters.
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: undefined } },
    );
    assert.notEqual(run.status, 0, run.stdout);
    const lines = failureSummary(readFileSync(out, 'utf8'), dir);
    assert.equal(lines[0], '# 1 failed (tests and the suites or files holding them):');
    assert.match(lines[1], /^# FAILED late\.test\.mjs › \(the file itself\): .*\[exit code 7\]$/);
    assert.ok(
      lines.some((l) => l.includes('| closing the worker: pool is draining')),
      lines.join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
