/**
 * Runs the `dreact` CLI as a user would: a separate node process on `bin/dreact.cjs`, stdin closed,
 * NO_COLOR, a fresh DREACT_HOME unless the caller gives one. `stackCliEnv` points it at a test
 * stack (external mode: its Temporal server, Postgres schema and task queue).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as bytes (a download written to stdout). */
  bytes: Buffer;
}

export interface CliOptions {
  /** Added to (and overriding) this process's environment; a key set to undefined is removed. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const BIN = join(__dirname, '..', '..', 'bin', 'dreact.cjs');

export function runDreact(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DREACT_HOME: mkdtempSync(join(tmpdir(), 'dreact-home-')),
    NO_COLOR: '1',
    ...options.env,
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, [BIN, ...args], {
    env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      const bytes = Buffer.concat(out);
      resolve({ code: code ?? (signal ? 128 : 1), stdout: bytes.toString(), stderr, bytes });
    }),
  );
}

/** The environment that points the CLI at a test stack's Temporal server, database schema and queue. */
export function stackCliEnv(stack: {
  server: { address: string };
  db: { databaseUrl: string; schema: string };
  taskQueue?: string;
}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: stack.server.address,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_DB_SCHEMA: stack.db.schema,
    ...(stack.taskQueue !== undefined ? { DREACT_TASK_QUEUE: stack.taskQueue } : {}),
  };
}
