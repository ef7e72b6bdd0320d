/**
 * `durable-react/worker`: what a team's own worker process needs (docs/agents.md,
 * examples/support-agent/worker.ts) — `createWorker({ connection, db, agents, tools })` over the
 * stack's Postgres (`openDb`, `migrate`) and Temporal (`NativeConnection`).
 *
 *   const worker = await createWorker({
 *     connection: await NativeConnection.connect({ address }),
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
