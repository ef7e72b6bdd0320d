/**
 * The support team's worker: durable-react's turn runtime with the support agent
 * (./agents/support.yaml) and its two tools. Run from a project that installed durable-react:
 * `node --import tsx support-agent/worker.ts` (the Temporal connection — a temporal.toml profile or
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* — DATABASE_URL,
 * DREACT_TASK_QUEUE, and the agent's SUPPORT_* secrets); README.md beside this file.
 */
import { join } from 'node:path';
import {
  createWorker,
  connectTemporalWorker,
  openDb,
  migrate,
  resolveTemporalConnection,
  TemporalConnectionError,
  type CreateWorkerOptions,
} from 'durable-react/worker';
import { orderLookup, closeOrdersDb } from './tools/orders';
import { shippingStatus } from './tools/shipping';

/** The worker, on `connection` and `db`; anything else (task queue, model) from `options`. */
export function supportWorker(options: Pick<CreateWorkerOptions, 'connection' | 'db'> & Partial<CreateWorkerOptions>) {
  return createWorker({
    agents: { dir: join(__dirname, 'agents') },
    tools: [orderLookup, shippingStatus],
    ...options,
  });
}

async function main(): Promise<void> {
  const temporal = resolveTemporalConnection();
  const connection = await connectTemporalWorker(temporal);
  const db = openDb();
  await migrate(db);
  const worker = await supportWorker({
    connection,
    db,
    namespace: temporal.namespace,
    taskQueue: process.env.DREACT_TASK_QUEUE,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  console.error('[support] worker polling');
  await worker.run();
  await closeOrdersDb();
  await db.close();
  await connection.close();
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof TemporalConnectionError ? `[support] ${err.message}` : err);
    process.exit(1);
  });
}
