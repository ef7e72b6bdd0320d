import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const probe = (mode: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '../../support/closed-channel-probe.ts'), ...mode], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: undefined },
  });

test('a connection closed while a call waits to retry: the guard ends the call; without it the process dies', () => {
  // The SDK's retry interceptor alone: its timer starts the call on the closed channel and throws.
  const bare = probe([]);
  assert.notEqual(bare.status, 0, bare.stdout);
  assert.match(bare.stderr, /Channel has been shut down/);
  assert.match(bare.stderr, /grpc-retry/);
  // Guarded: the caller's promise rejects (CANCELLED, not retried) and the process ends normally.
  const guarded = probe(['guarded']);
  assert.equal(guarded.status, 0, guarded.stderr);
  assert.match(guarded.stdout, /^rejected: 1 CANCELLED: Channel has been shut down: the connection was closed/);
});
