import { test } from 'node:test';
import assert from 'node:assert/strict';
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
