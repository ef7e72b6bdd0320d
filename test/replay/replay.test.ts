import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { FIXTURE_DIR, readFixtureIndex } from '../support/fixtures';
import { cachedWorkflowBundle } from '../../workers/bundle';

test('committed workflow histories replay against the current workflow code without nondeterminism', async () => {
  const index = readFixtureIndex();
  const files = readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json') && f !== 'index.json')
    .sort();
  assert.ok(files.length >= 5, `expected committed fixtures in ${FIXTURE_DIR}, found ${files.length}`);
  const histories = files.map((f) => ({
    workflowId: index[f.replace(/\.json$/, '')] ?? assert.fail(`${f} is missing from index.json`),
    history: historyFromJSON(JSON.parse(readFileSync(join(FIXTURE_DIR, f), 'utf8'))),
  }));
  const failures: string[] = [];
  let replayed = 0;
  // The bundle the worker runs (zod preloaded into the shared V8 context), not a fresh build.
  const workflowBundle = await cachedWorkflowBundle(require.resolve('../../workflows'));
  for await (const r of Worker.runReplayHistories({ workflowBundle, replayName: 'fixtures' }, histories)) {
    replayed += 1;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
  }
  assert.equal(replayed, files.length);
  assert.deepEqual(failures, []);
});
