/**
 * Integration-test stack: a real Temporal server (TEMPORAL_ADDRESS from the runner, or one
 * started here) and real Postgres in a schema of its own, a worker on a unique task queue,
 * and the client API.
 */
import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { openDb, migrate, dropSchema, type Db } from '../../activities/store/db';
import { createWorker, type CreateWorkerOptions } from '../../workers/worker';
import { DreactClient } from '../../client/api';
import { startTemporalServer, type TemporalServer } from '../../client/stack/temporal-server';

export interface TestStack {
  server: TemporalServer;
  db: Db;
  taskQueue: string;
  client: DreactClient;
  worker?: Worker;
  workerRun?: Promise<void>;
  startWorker(extra?: Partial<CreateWorkerOptions>): Promise<Worker>;
  stopWorker(): Promise<void>;
  teardown(): Promise<void>;
}

export function uniqueId(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export async function createTestStack(name: string): Promise<TestStack> {
  const server = await startTemporalServer();
  const db = openDb({ schema: uniqueId(`t_${name}`).toLowerCase() });
  await migrate(db);
  const taskQueue = uniqueId(`tq-${name}`);
  const stack: TestStack = {
    server,
    db,
    taskQueue,
    client: new DreactClient(server.env.client, { taskQueue }),
    async startWorker(extra = {}) {
      const worker = await createWorker({ connection: server.env.nativeConnection, db, taskQueue, ...extra });
      stack.worker = worker;
      stack.workerRun = worker.run();
      return worker;
    },
    async stopWorker() {
      if (stack.worker && stack.worker.getState() === 'RUNNING') stack.worker.shutdown();
      await stack.workerRun;
      stack.worker = undefined;
    },
    async teardown() {
      await stack.stopWorker();
      await dropSchema(db);
      await db.close();
      await server.stop();
    },
  };
  return stack;
}
