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

test("a file that fails outside its tests is named with its exit code, its last lines of output and the runner's warning", () => {
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
    // A test whose promise rejects after it ended: the runner says so in a diagnostic naming no file.
    const late = join(dir, 'rejects.test.mjs');
    writeFileSync(
      late,
      [
        "import { test } from 'node:test';",
        "test('ends first', () => { setTimeout(() => Promise.reject(new Error('the stream closed late')), 50); });",
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
        late,
      ],
      // Not as this runner's child: without NODE_TEST_CONTEXT it runs its own file and reporters.
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: undefined } },
    );
    assert.notEqual(run.status, 0, run.stdout);
    const lines = failureSummary(readFileSync(out, 'utf8'), dir);
    const text = lines.join('\n');
    assert.equal(lines[0], '# 2 failed (tests and the suites or files holding them):');
    assert.match(text, /^# FAILED late\.test\.mjs › \(the file itself\): .*\[exit code 7\]$/m);
    assert.match(text, /^# {3}\| closing the worker: pool is draining$/m);
    assert.match(text, /^# FAILED rejects\.test\.mjs › \(the file itself\): .*\[exit code 1\]$/m);
    assert.match(text, /^# {3}\| .*"ends first".*after the test ended.*the stream closed late/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
