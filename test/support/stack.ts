/**
 * Integration-test stack: a real Temporal server (TEMPORAL_ADDRESS from the runner, or one
 * started here) and real Postgres in a schema of its own, a worker on a unique task queue,
 * and the client API.
 */
import { randomBytes } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { createWorker, type CreateWorkerOptions } from '../../workers/worker';
import type { DreactWorker } from '../../workers/role-workers';
import { DreactClient } from '../../client/api';
import { startTemporalServer, type TemporalServer } from '../../apps/stack/temporal-server';

// Quiet workers in test output: warnings and errors only.
Runtime.install({ logger: new DefaultLogger('WARN') });

export interface TestStack {
  server: TemporalServer;
  db: Db;
  taskQueue: string;
  client: DreactClient;
  worker?: DreactWorker;
  workerRun?: Promise<void>;
  startWorker(extra?: Partial<CreateWorkerOptions>): Promise<DreactWorker>;
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
      // Turns that name no model run the scripted one here (a deployment's default is never scripted).
      const worker = await createWorker({
        connection: server.env.nativeConnection,
        namespace: server.namespace,
        db,
        taskQueue,
        defaultModel: { provider: 'scripted' },
        ...extra,
      });
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

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const thinking = (t: string) => `<channel:thinking>${t}</channel:thinking>`;
export const decision = (obj: unknown) =>
  `<channel:ReactDecisionOutV2>\`\`\`json\n${JSON.stringify(obj)}\n\`\`\`</channel:ReactDecisionOutV2>`;
export const callTool = (toolId: string, params: Record<string, unknown>, notes = `call ${toolId}`) =>
  thinking(`next: ${toolId}`) + decision({ action: 'call_tool', notes, tool_call: { tool_id: toolId, params } });
/** A final round: a decision with a final_answer leaves notes empty (else final_answer_with_notes). */
export const complete = (answer: string) =>
  thinking('answering') + decision({ action: 'complete', notes: '', final_answer: answer });
