/**
 * `durable-react/worker`: what a team's own worker process needs (docs/agents.md,
 * examples/support-agent/worker.ts) — `createWorker({ connection, db, agents, tools })` over the
 * stack's Postgres (`openDb`, `migrate`) and Temporal (`connectTemporalWorker`: the same connection
 * settings as the `temporal` CLI — a temporal.toml profile, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS_*).
 *
 *   const temporal = resolveTemporalConnection();
 *   const worker = await createWorker({
 *     connection: await connectTemporalWorker(temporal),
 *     namespace: temporal.namespace,
 *     db: openDb(), // DATABASE_URL, DREACT_DB_SCHEMA
 *     agents: { dir: join(__dirname, 'agents') },
 *     tools: [orderLookup, shippingStatus],
 *   });
 *   await worker.run();
 */
export { createWorker, type CreateWorkerOptions } from '../worker';
export { openDb, migrate, type Db } from '../../store/db';
export { TASK_QUEUE } from '../../core/turn/ids';
export { NativeConnection } from '@temporalio/worker';
export {
  resolveTemporalConnection,
  connectTemporalWorker,
  connectTemporalClient,
  describeConnectionError,
  TemporalConnectionError,
  type ResolvedTemporalConnection,
} from '../../client/temporal/connection';
export { WORKER_ROLES, parseWorkerRoles, configuredTaskQueues, type WorkerRole } from '../../core/turn/roles';
export type { DreactWorker } from '../role-workers';
