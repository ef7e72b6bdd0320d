import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs, requiring, skipSummary, whenMet } from '../../support/requirements';

const missingTool = { group: 'gadget tests', requirement: 'chromium', why: 'no gadget' } as const;

/** Runs fn with env vars set, restoring them after. */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

test('a missing tool: each guarded registration skips with the reason and is recorded; hooks do nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-req-'));
  try {
    const file = join(dir, 'skips.jsonl');
    const calls: unknown[][] = [];
    const register = (...args: unknown[]) => calls.push(args);
    withEnv({ CI: undefined, DREACT_TEST_SKIPS: file }, () => {
      const t = requiring(register, missingTool);
      const body = () => undefined;
      t('one', body);
      t('two', { timeout: 5 }, body);
      let ran = false;
      whenMet((fn: () => void) => fn(), missingTool)(() => (ran = true));
      assert.equal(ran, false);
    });
    const reason = 'no gadget (apt-get install chromium)';
    assert.deepEqual(calls[0]!.slice(0, 2), ['one', { skip: reason }]);
    assert.deepEqual(calls[1]!.slice(0, 2), ['two', { timeout: 5, skip: reason }]);
    assert.deepEqual(skipSummary(readFileSync(file, 'utf8').split('\n')), [
      'skipped: gadget tests (2) — no gadget: apt-get install chromium',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a met requirement changes nothing; under CI a missing one is an error naming the install command', () => {
  const register = () => undefined;
  assert.equal(requiring(register, { ...missingTool, why: undefined }), register);
  withEnv({ CI: 'true' }, () =>
    assert.throws(
      () => needs(missingTool),
      /gadget tests: no gadget — CI must have it \(\.ci\/run: apt-get install chromium\)/,
    ),
  );
  withEnv({ CI: 'true' }, () =>
    assert.equal(typeof needs({ group: 'docker things', requirement: 'docker', why: 'no engine' }), 'string'),
  );
});
