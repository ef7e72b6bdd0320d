/**
 * Integration-test stack: a real Temporal server (TEMPORAL_ADDRESS from the runner, or one
 * started here) and real Postgres in a schema of its own, a worker on a unique task queue,
 * and the client API; API keys in the stack's database and gateways over its client and pool on
 * an ephemeral port, closed by `teardown`.
 */
import { randomBytes } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { createWorker, type CreateWorkerOptions } from '../../workers/worker';
import type { DreactWorker } from '../../workers/role-workers';
import { DreactClient } from '../../client/api';
import { startTemporalServer, type TemporalServer, type TemporalServerOptions } from '../../apps/stack/temporal-server';
import { startGateway, type RunningGateway, type StartGatewayOptions } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import type { KeyScope } from '../../core/tenancy/principal';

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
  /** A new API key in the stack's database: tenant `acme`, project `web`, no user unless `at` names them. */
  apiKey(scopes: KeyScope[], at?: { tenantId?: string; projectId?: string; userId?: string | null }): Promise<string>;
  /**
   * A gateway over the stack's client and pool on an ephemeral port of 127.0.0.1, quiet, with no
   * configured keys (database keys only) unless `opts` says otherwise; `teardown` closes it first.
   */
  startGateway(opts?: Partial<StartGatewayOptions>): Promise<RunningGateway>;
  /** Closes the gateways, stops the worker, drops the schema and stops the server. */
  teardown(): Promise<void>;
}

export interface TestStackOptions {
  /** The Temporal server's options (e.g. its web UI); default: the runner's server, or one started here. */
  server?: TemporalServerOptions;
}

export function uniqueId(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export async function createTestStack(name: string, opts: TestStackOptions = {}): Promise<TestStack> {
  const server = await startTemporalServer(opts.server);
  const db = openDb({ schema: uniqueId(`t_${name}`).toLowerCase() });
  await migrate(db);
  const taskQueue = uniqueId(`tq-${name}`);
  const gateways: RunningGateway[] = [];
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
    async apiKey(scopes, at = {}) {
      const { tenantId = 'acme', projectId = 'web', userId = null } = at;
      return (await createApiKey(db.pool, { tenantId, projectId, userId, scopes })).key;
    },
    async startGateway(gatewayOpts = {}) {
      const gw = await startGateway({
        client: stack.client,
        pool: db.pool,
        apiKeys: [],
        port: 0,
        host: '127.0.0.1',
        log: () => undefined,
        ...gatewayOpts,
      });
      gateways.push(gw);
      return gw;
    },
    async teardown() {
      for (const gw of gateways.splice(0)) await gw.close();
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
/** A final round that streams its answer on the answer channel (as models do), after the decision. */
export const answerRound = (text: string) =>
  thinking('I can answer now.') +
  decision({ action: 'complete', notes: 'answer', suggested_followups: ['Tell me more'] }) +
  `<channel:answer>${text}</channel:answer>`;
