/**
 * Standalone worker process: `node --import tsx workers/main.ts`.
 * Env: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE, DREACT_TASK_QUEUE,
 * DATABASE_URL, DREACT_DB_SCHEMA, DREACT_EXEC_BACKEND (local | docker | off). Shuts down gracefully on SIGINT/SIGTERM (in-flight
 * activities finish or are retried elsewhere).
 */
import { NativeConnection } from '@temporalio/worker';
import { openDb, migrate } from '../store/db';
import { Client, Connection } from '@temporalio/client';
import { createWorker } from './worker';
import { createExecTool } from '../activities/exec/exec-tool';
import { fargateBackendFromEnv } from '../activities/exec/fargate/backend';
import { ensureExecReaperSchedule } from './exec-reaper-schedule';
import { setupTelemetry } from './telemetry';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const db = openDb();
  await migrate(db);
  const connection = await NativeConnection.connect({ address });
  const fargate = process.env.DREACT_EXEC_BACKEND === 'fargate' ? fargateBackendFromEnv() : undefined;
  const worker = await createWorker({
    connection,
    db,
    namespace: process.env.TEMPORAL_NAMESPACE,
    taskQueue: process.env.DREACT_TASK_QUEUE,
    // exec.python, on the backend DREACT_EXEC_BACKEND names (local bubblewrap by default; fargate; `off`: no exec tool).
    extraTools: process.env.DREACT_EXEC_BACKEND === 'off' ? [] : [createExecTool(fargate ? { backend: fargate } : {})],
    fargate,
  });
  if (fargate) {
    const clientConnection = await Connection.connect({ address });
    const id = await ensureExecReaperSchedule(
      new Client({
        connection: clientConnection,
        interceptors: setupTelemetry().clientInterceptors,
        namespace: process.env.TEMPORAL_NAMESPACE,
      }),
      { taskQueue: worker.options.taskQueue },
    );
    console.error(`[worker] exec reaper schedule ${id} is in place`);
    await clientConnection.close();
  }
  const stop = () => {
    console.error('[worker] shutting down…');
    worker.shutdown();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.error(`[worker] polling ${worker.options.taskQueue} on ${address} (db schema ${db.schema})`);
  await worker.run();
  await connection.close();
  await db.close();
}

main().catch((err) => {
  console.error(`[worker] fatal: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
