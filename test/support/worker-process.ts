/**
 * A worker as a process of its own (`workers/main.ts`) on a test stack's Temporal server, schema
 * and task queue — for tests that kill it (`kill('SIGKILL')`) mid-turn and start another.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { TestStack } from './stack';

export function spawnWorkerProcess(stack: TestStack, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'workers', 'main.ts')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.server.address,
      DREACT_DB_SCHEMA: stack.db.schema,
      DATABASE_URL: stack.db.databaseUrl,
      DREACT_TASK_QUEUE: stack.taskQueue,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', () => undefined);
  return child;
}
