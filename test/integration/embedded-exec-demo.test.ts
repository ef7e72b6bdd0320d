/**
 * The demo's exec turn (`npm run demo`, turn 3): code runs in the sandbox with exec.python and its
 * output file is read back with react.read and printed — in bubblewrap, and on a machine without
 * it (no `bwrap` on PATH) in the wasm backend (Pyodide), which needs nothing but Node and npm.
 * The demo runs as a user runs it (its own process and embedded stack) over the test Postgres, in a
 * schema of this file.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropSchema, openDb } from '../../store/db';
import { uniqueId } from '../support/stack';
import { execScratch } from '../support/exec';
import { pathWithout } from '../support/path-without';
import { findExecutable } from '../../activities/exec/bubblewrap';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = uniqueId('t_demo_exec').toLowerCase();
const home = mkdtempSync(join(tmpdir(), 'dreact-demo-exec-'));
const scratch = execScratch('demo-exec');
const noBwrapPath = pathWithout('bwrap');
/** Runs needing bubblewrap skip where it is not installed, except under CI (which installs it). */
const noBwrapHere =
  !process.env.CI && !findExecutable('bwrap') ? 'bubblewrap is not installed (apt-get install bubblewrap)' : false;

after(async () => {
  const db = openDb({ databaseUrl: DATABASE_URL, schema });
  await dropSchema(db);
  await db.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
  rmSync(noBwrapPath, { recursive: true, force: true });
});

function demo(extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.TEMPORAL_ADDRESS; // the demo's own embedded stack
  delete env.DREACT_EXEC_BACKEND;
  delete env.DREACT_DEMO_KEEP;
  Object.assign(env, {
    DREACT_HOME: mkdtempSync(join(home, 'h-')),
    DATABASE_URL,
    DREACT_DB_SCHEMA: schema,
    DREACT_EXEC_WORK_DIR: join(scratch, 'work'),
    DREACT_EXEC_STATE_DIR: join(scratch, 'state'),
    DREACT_TEMPORAL_PORT: '17733',
    NO_COLOR: '1',
    ...extraEnv,
  });
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'scripts', 'demo.ts')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
}

/** The demo's output from turn 3's heading on. */
const turn3 = (stdout: string) => stdout.slice(stdout.indexOf('━━ Turn 3'));

test('demo turn 3 runs Python in bubblewrap and prints the output file read back', { skip: noBwrapHere }, async () => {
  const r = await demo();
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /\[stack\] exec\.python: local \(bubblewrap /);
  const out = turn3(r.stdout);
  assert.match(out, /━━ Turn 3: code in the sandbox \(exec\.python\), its output file read back ━━/);
  assert.match(out, /✓ exec\.python .*Status: success/);
  assert.match(out, /✔ turn 3: complete in 3 rounds/);
  assert.match(
    out,
    /Output file read back \(react\.read\):\n\[READ\] fi:turn_3\.outputs\/squares\.csv \(56 chars, 6 lines\)\nn,square,cube\r?\n1,1,1\r?\n2,4,8\r?\n3,9,27\r?\n4,16,64\r?\n5,25,125/,
  );
  assert.match(r.stdout, /Temporal UI: .*conv%2F\w+%2Fturn%2F3/);
});

test('without bubblewrap (no bwrap on PATH) turn 3 runs Python in WebAssembly and prints the CSV read back', async () => {
  const r = await demo({ PATH: noBwrapPath });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  // One start line says what exec runs on, why, and what it cannot do.
  assert.equal(r.stderr.match(/exec\.python: /g)?.length, 1, r.stderr);
  assert.match(
    r.stderr,
    /\[stack\] exec\.python: wasm \(Pyodide [\d.]+, a sandbox process per call; bubblewrap is not installed \(no `bwrap` on PATH\)\) — it runs the Python standard library only \(no numpy, pandas/,
  );
  const out = turn3(r.stdout);
  assert.match(out, /✓ exec\.python .*Status: success/);
  assert.match(out, /✔ turn 3: complete in 3 rounds/);
  assert.match(
    out,
    /Output file read back \(react\.read\):\n\[READ\] fi:turn_3\.outputs\/squares\.csv \(56 chars, 6 lines\)\nn,square,cube\r?\n1,1,1\r?\n2,4,8\r?\n3,9,27\r?\n4,16,64\r?\n5,25,125/,
  );
});
