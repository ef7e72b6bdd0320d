/**
 * exec.python in the embedded stack (`dreact turn`, `dreact dev`): the same tool set as the
 * standalone worker (workers/tool-set.ts). Through the CLI as a user runs it, against the test
 * Postgres in a schema of this file: an exec turn runs in bubblewrap and its output file is read
 * back; with no `bwrap` on PATH it runs on the wasm backend (Pyodide) and its output is read back
 * the same way; DREACT_EXEC_BACKEND=wasm chooses it; DREACT_EXEC_BACKEND=off removes the tool.
 * Through the client: with neither bubblewrap nor Pyodide (injected probes) the tool is still
 * listed and the call is an observation that says what to install (the turn completes).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropSchema, migrate, openDb, type Db } from '../../store/db';
import { loadBlocks } from '../../store/timeline-store';
import { startEmbeddedStack } from '../../apps/stack/embedded';
import { DreactClient } from '../../client/api';
import { execBackendName, workerToolSet } from '../../workers/tool-set';
import { EXEC_TOOL_ID } from '../../core/exec';
import type { Block } from '../../core/timeline/block';
import type { ToolContext } from '../../activities/tools/types';
import { execScratch } from '../support/exec';
import { pathWithout } from '../support/path-without';
import { findExecutable } from '../../activities/exec/bubblewrap';
import { uniqueId } from '../support/stack';
import { runDreact } from '../support/dreact-cli';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = uniqueId('t_embedded_exec').toLowerCase();
const home = mkdtempSync(join(tmpdir(), 'dreact-embedded-exec-'));
const scratch = execScratch('embedded-exec');
const noBwrapPath = pathWithout('bwrap');
/** Runs needing bubblewrap skip where it is not installed, except under CI (which installs it). */
const noBwrapHere =
  !process.env.CI && !findExecutable('bwrap') ? 'bubblewrap is not installed (apt-get install bubblewrap)' : false;
let db: Db;

before(async () => {
  db = openDb({ databaseUrl: DATABASE_URL, schema });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
  rmSync(noBwrapPath, { recursive: true, force: true });
});

/** `dreact <args>` in its own process, on an embedded stack of its own, over the test Postgres schema. */
/** `dreact <args>` in its own process, on an embedded stack of its own, over the test Postgres schema. */
const dreact = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
  runDreact(args, {
    env: {
      TEMPORAL_ADDRESS: undefined, // the embedded stack, not the test run's server
      DREACT_EXEC_BACKEND: undefined,
      DREACT_HOME: mkdtempSync(join(home, 'h-')),
      DATABASE_URL,
      DREACT_DB_SCHEMA: schema,
      DREACT_EXEC_WORK_DIR: join(scratch, 'work'),
      DREACT_EXEC_STATE_DIR: join(scratch, 'state'),
      DREACT_TEMPORAL_PORT: '17533',
      ...extraEnv,
    },
  });

/** Runs the demo's exec turn (script demo-exec) through `dreact turn --json`; returns its blocks. */
async function execTurn(env: NodeJS.ProcessEnv = {}): Promise<{ blocks: Block[]; stderr: string; out: TurnJson }> {
  const r = await dreact(['turn', 'Compute a small table as a CSV file.', '--script', 'demo-exec', '--json'], env);
  assert.equal(r.code, 0, r.stderr);
  let out: TurnJson;
  try {
    out = JSON.parse(r.stdout.trim()) as TurnJson;
  } catch {
    assert.fail(`dreact turn --json printed no JSON: ${JSON.stringify(r.stdout)}\n${r.stderr}`);
  }
  return { blocks: await loadBlocks(db.pool, out.conversationId), stderr: r.stderr, out };
}
interface TurnJson {
  conversationId: string;
  completionPath: string;
  rounds: number;
}

const resultOf = (blocks: Block[], tool: string) =>
  blocks.find((b) => b.type === 'react.tool.result' && b.meta?.tool_id === tool);
const notices = (blocks: Block[]) => blocks.filter((b) => b.type === 'react.notice').map((b) => b.text ?? '');

describe('exec.python in the embedded stack, through the CLI', () => {
  test(
    'dreact turn runs code in bubblewrap; the output file is an artifact, read back with react.read',
    { skip: noBwrapHere },
    async () => {
      const { blocks, stderr, out } = await execTurn();
      assert.match(stderr, /\[stack\] exec\.python: local \(bubblewrap \/\S*bwrap\)/);
      assert.equal(out.completionPath, 'complete');
      const exec = resultOf(blocks, EXEC_TOOL_ID);
      assert.ok(exec, 'exec.python result recorded');
      assert.equal(exec.meta?.ok, true, exec.text);
      assert.equal(exec.meta?.backend, 'local');
      const read = resultOf(blocks, 'react.read');
      assert.equal(read?.meta?.ok, true, read?.text);
      assert.match(read?.text ?? '', /fi:turn_1\.outputs\/squares\.csv/);
      assert.match(read?.text ?? '', /n,square,cube\r?\n1,1,1\r?\n2,4,8\r?\n3,9,27\r?\n4,16,64\r?\n5,25,125/);
      assert.deepEqual(notices(blocks), [], 'no protocol notice (the tool is known)');
    },
  );

  const readsBackTheCsv = (blocks: Block[]) => {
    const read = resultOf(blocks, 'react.read');
    assert.equal(read?.meta?.ok, true, read?.text);
    assert.match(read?.text ?? '', /fi:turn_1\.outputs\/squares\.csv/);
    assert.match(read?.text ?? '', /n,square,cube\r?\n1,1,1\r?\n2,4,8\r?\n3,9,27\r?\n4,16,64\r?\n5,25,125/);
  };

  test('no bwrap on PATH: exec.python runs on the wasm backend (one start line says what it cannot do); the CSV is read back', async () => {
    const { blocks, stderr, out } = await execTurn({ PATH: noBwrapPath });
    assert.equal(stderr.match(/exec\.python: /g)?.length, 1, stderr);
    assert.match(
      stderr,
      /\[stack\] exec\.python: wasm \(Pyodide [\d.]+, a sandbox process per call; bubblewrap is not installed \(no `bwrap` on PATH\)\) — it runs the Python standard library only \(no numpy, pandas, matplotlib or other packages: the npm package ships no wheels and nothing is downloaded\), one thread \(no subprocess, fork or threads\), no network/,
    );
    assert.equal(out.completionPath, 'complete');
    const exec = resultOf(blocks, EXEC_TOOL_ID);
    assert.equal(exec?.meta?.ok, true, exec?.text);
    assert.equal(exec?.meta?.backend, 'wasm');
    readsBackTheCsv(blocks);
    assert.deepEqual(notices(blocks), [], 'no protocol notice (the tool is known)');
  });

  test('DREACT_EXEC_BACKEND=wasm chooses the wasm backend where bubblewrap is installed too', async () => {
    const { blocks, stderr } = await execTurn({ DREACT_EXEC_BACKEND: 'wasm' });
    assert.match(
      stderr,
      /\[stack\] exec\.python: wasm \(Pyodide [\d.]+, a sandbox process per call; DREACT_EXEC_BACKEND=wasm\)/,
    );
    assert.equal(resultOf(blocks, EXEC_TOOL_ID)?.meta?.backend, 'wasm');
    readsBackTheCsv(blocks);
  });

  test('DREACT_EXEC_BACKEND=off: exec.python is not offered (the call is an unknown tool)', async () => {
    const { blocks, stderr } = await execTurn({ DREACT_EXEC_BACKEND: 'off' });
    assert.match(stderr, /\[stack\] exec\.python: off \(DREACT_EXEC_BACKEND=off\)/);
    assert.equal(resultOf(blocks, EXEC_TOOL_ID), undefined, 'no exec result');
    assert.ok(
      notices(blocks).some((n) => n.includes('unknown_tool') && n.includes('exec.python')),
      `an unknown-tool notice: ${JSON.stringify(notices(blocks))}`,
    );
  });
});

/** Sets environment variables; returns the function that puts the old values back. */
function setEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

describe('exec.python in the embedded stack, through the client', () => {
  test('neither bubblewrap (it cannot create namespaces) nor Pyodide (injected probes): the call says what to install, the turn completes', async () => {
    const reason =
      "bubblewrap (/usr/bin/bwrap) cannot create the sandbox's namespaces here: No permissions to create new namespace";
    const lines: string[] = [];
    // The stack reads its database from the environment: this file's schema of the test Postgres.
    const restore = setEnv({ DATABASE_URL, DREACT_DB_SCHEMA: schema });
    const stack = await startEmbeddedStack({
      home: mkdtempSync(join(home, 'client-')),
      ui: false,
      log: (l) => lines.push(l),
      tools: {
        env: { PATH: process.env.PATH },
        probe: async () => ({ ok: false, reason }),
        wasmProbe: () => ({ ok: false, reason: 'pyodide is not installed' }),
      },
    }).finally(restore);
    try {
      assert.equal(lines.filter((l) => l.startsWith('[stack] exec.python:')).length, 1, lines.join('\n'));
      const api = new DreactClient(stack.client);
      const conv = uniqueId('conv');
      await api.startTurn(conv, 'Compute a small table.', { model: { provider: 'scripted', script: 'demo-exec' } });
      const r = await api.result(conv, 1);
      assert.equal(r.completionPath, 'complete');
      const blocks = await loadBlocks(db.pool, conv);
      const exec = resultOf(blocks, EXEC_TOOL_ID);
      assert.equal(exec?.meta?.ok, false);
      assert.ok(exec?.text?.includes(reason), exec?.text);
      assert.match(exec?.text ?? '', /apt-get install bubblewrap/);
    } finally {
      await stack.stop();
    }
  });
});

describe('workerToolSet', () => {
  test('the backend names: local by default, off, docker; an unknown one stops the start naming the choices', async () => {
    assert.equal(execBackendName({}), 'local');
    assert.equal(execBackendName({ DREACT_EXEC_BACKEND: 'off' }), 'off');
    assert.equal(execBackendName({ DREACT_EXEC_BACKEND: 'docker' }), 'docker');
    assert.equal(execBackendName({ DREACT_EXEC_BACKEND: 'wasm' }), 'wasm');
    assert.throws(() => execBackendName({ DREACT_EXEC_BACKEND: 'lambda' }), {
      message: 'DREACT_EXEC_BACKEND=lambda: no such exec backend (use one of local | docker | fargate | wasm | off)',
    });
    const off = await workerToolSet({ env: { DREACT_EXEC_BACKEND: 'off' } });
    assert.deepEqual(off.extraTools, []);
    const docker = await workerToolSet({ env: { DREACT_EXEC_BACKEND: 'docker' } });
    assert.deepEqual(
      docker.extraTools.map((t) => t.declaration.id),
      [EXEC_TOOL_ID],
    );
  });

  test('local: probed once (bwrap here works); missing: wasm; neither: listed, and each call is the observation, never a throw', async () => {
    const logged: string[] = [];
    const here = await workerToolSet({ env: { PATH: process.env.PATH }, log: (l) => logged.push(l) });
    assert.equal(here.exec, 'local');
    assert.equal(logged.length, 1);
    const wasm = await workerToolSet({ env: { PATH: noBwrapPath }, log: (l) => logged.push(l), warm: false });
    assert.equal(wasm.exec, 'wasm');
    assert.equal(wasm.extraTools[0]?.declaration.id, EXEC_TOOL_ID);
    assert.equal(logged.length, 2);
    const missing = await workerToolSet({
      env: { PATH: noBwrapPath },
      log: (l) => logged.push(l),
      wasmProbe: () => ({ ok: false, reason: 'pyodide is not installed' }),
    });
    assert.equal(missing.exec, 'unavailable');
    assert.equal(logged.length, 3);
    assert.match(
      logged[2]!,
      /^exec\.python: unavailable — bubblewrap is not installed \(no `bwrap` on PATH\); pyodide is not installed\./,
    );
    const [tool] = missing.extraTools;
    assert.equal(tool?.declaration.id, EXEC_TOOL_ID);
    const ctx = {} as ToolContext; // the unavailable tool touches nothing
    await tool!.impl.launch!({}, ctx);
    const obs = await tool!.impl.run({}, ctx);
    assert.equal(obs.ok, false);
    assert.match(obs.text, /^exec\.python is unavailable on this worker, nothing was run: bubblewrap is not installed/);
  });
});
