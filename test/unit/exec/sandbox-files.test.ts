import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_EXEC_LIMITS, listOutputs, readTail, sandboxEnv } from '../../../activities/exec/sandbox-files';
import type { ExecSpec } from '../../../activities/exec/backend';

const root = mkdtempSync(path.join(os.tmpdir(), 'sandbox-files-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('listOutputs: regular files only, never following symlinks; count, total and per-file caps', async () => {
  const out = path.join(root, 'out');
  mkdirSync(path.join(out, 'd'), { recursive: true });
  writeFileSync(path.join(out, 'a.txt'), 'aaaa');
  writeFileSync(path.join(out, 'b.txt'), 'bbbbbbbb');
  writeFileSync(path.join(out, 'd', 'c.txt'), 'cc');
  writeFileSync(path.join(out, 'z.bin'), 'z'.repeat(100));
  symlinkSync('/etc/passwd', path.join(out, 'link'));
  const all = await listOutputs(out, DEFAULT_EXEC_LIMITS);
  assert.deepEqual(
    all.outputFiles.map((f) => f.path),
    ['a.txt', 'b.txt', 'd/c.txt', 'z.bin'],
  );
  assert.deepEqual(all.dropped, [{ path: 'link', reason: 'is a symbolic link (not collected)' }]);
  const capped = await listOutputs(out, {
    ...DEFAULT_EXEC_LIMITS,
    maxFileBytes: 50,
    maxOutputFiles: 2,
    maxOutputBytes: 10,
  });
  assert.deepEqual(
    capped.outputFiles.map((f) => f.path),
    ['a.txt', 'd/c.txt'],
  ); // b.txt would pass the 10-byte total
  const reasons = Object.fromEntries(capped.dropped.map((d) => [d.path, d.reason]));
  assert.match(reasons['b.txt']!, /over the 10-byte output cap/);
  assert.match(reasons['z.bin']!, /over the 50-byte file cap/);
  assert.ok(reasons['link']);
  assert.deepEqual(await listOutputs(path.join(root, 'absent'), DEFAULT_EXEC_LIMITS), { outputFiles: [], dropped: [] });
});

test('readTail keeps the last bytes and drops a cut leading character', async () => {
  const f = path.join(root, 'log');
  writeFileSync(f, `head ${'é'.repeat(10)}tail`);
  assert.equal(await readTail(f, 1000), `head ${'é'.repeat(10)}tail`);
  const t = await readTail(f, 9);
  assert.ok(t.endsWith('tail'));
  assert.ok(!t.includes('\uFFFD'));
  assert.equal(await readTail(path.join(root, 'none'), 10), '');
});

test('sandboxEnv holds no secret and nothing of the worker environment', () => {
  process.env.DATABASE_URL ??= 'postgres://x';
  const spec = { execId: 'ex-1', supervisorSocket: '/h/runtime/s.sock' } as ExecSpec;
  const env = sandboxEnv(spec);
  assert.deepEqual(Object.keys(env).sort(), [
    'DREACT_SUPERVISOR_SOCKET',
    'EXECUTION_ID',
    'HOME',
    'LANG',
    'LOG_DIR',
    'OUTPUT_DIR',
    'PATH',
    'PYTHONDONTWRITEBYTECODE',
    'PYTHONPATH',
    'PYTHONUNBUFFERED',
  ]);
  assert.equal(env.DREACT_SUPERVISOR_SOCKET, '/runtime/s.sock');
  assert.equal(env.OUTPUT_DIR, '/workspace/out');
});
