/**
 * A scripted worker as a process of its own (test/support/scripted-worker.ts) on a test stack, with
 * agent files whose models run named scripts — for tests that kill it (`kill('SIGKILL')`) mid-turn.
 * `scriptedWorkerEnv` writes the agents and scripts once; each `startScriptedWorker` is a new process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { TestStack } from './stack';

/** `agents`: name → extra YAML lines of its file; `scripts`: name → script spec. */
export function scriptedWorkerEnv(
  stack: TestStack,
  agents: Record<string, string>,
  scripts: Record<string, unknown>,
): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-kill-agents-'));
  for (const [name, extra] of Object.entries(agents))
    writeFileSync(
      join(dir, `${name}.yaml`),
      `name: ${name}\ninstructions: You are ${name}.\nmodel: { provider: scripted, script: ${name} }\n${extra}`,
    );
  const scriptsFile = join(mkdtempSync(join(tmpdir(), 'dreact-scripts-')), 'scripts.json');
  writeFileSync(scriptsFile, JSON.stringify(scripts));
  return {
    TEMPORAL_ADDRESS: stack.server.address,
    DREACT_DB_SCHEMA: stack.db.schema,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_TASK_QUEUE: stack.taskQueue,
    DREACT_WORKER_STATE_DIR: mkdtempSync(join(tmpdir(), 'dreact-state-')),
    DREACT_AGENTS_DIR: dir,
    DREACT_TEST_SCRIPTS: scriptsFile,
    DREACT_EXEC_BACKEND: 'off',
  };
}

export function startScriptedWorker(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'scripted-worker.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += String(d);
      if (log.includes('[worker] polling')) resolve();
    });
    void exited.then(() => reject(new Error(`the worker exited before polling:\n${log.slice(-2000)}`)));
  });
  ready.catch(() => undefined);
  return { child, ready, exited };
}
