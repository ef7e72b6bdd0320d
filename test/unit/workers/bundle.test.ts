import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedWorkflowBundle, workflowCodeHash } from '../../../workers/bundle';

test('the workflow bundle is built once per code version and then read from the cache', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
  try {
    const env = { DREACT_BUNDLE_CACHE: dir };
    const path = require.resolve('../../../workflows');
    const first = await cachedWorkflowBundle(path, { env });
    const files = readdirSync(dir);
    assert.equal(files.length, 1, 'one cached bundle');
    // Passed by path (the SDK then keeps the inline source map as it is).
    assert.deepEqual(first, { codePath: join(dir, files[0]!) });
    assert.match(readFileSync(join(dir, files[0]!), 'utf8'), /TurnWorkflow/);
    const mtime = statSync(join(dir, files[0]!)).mtimeMs;
    const second = await cachedWorkflowBundle(path, { env });
    assert.deepEqual(second, first);
    assert.equal(statSync(join(dir, files[0]!)).mtimeMs, mtime, 'served from the cache, not rebuilt');
    assert.deepEqual(readdirSync(dir), files);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the cache key follows the workflow code (stable for the same sources)', () => {
  assert.match(workflowCodeHash(), /^[0-9a-f]{24}$/);
  assert.equal(workflowCodeHash(), workflowCodeHash());
});
