/**
 * Standalone worker process: `node dist/worker.cjs` (compiled at `npm install`; workers/build.ts),
 * or from the sources with `node --import tsx workers/main.ts`.
 * Env: the Temporal connection (client/temporal/connection.ts: a temporal.toml profile, TEMPORAL_ADDRESS —
 * default 127.0.0.1:7233 — TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*), DREACT_TASK_QUEUE,
 * DATABASE_URL, DREACT_DB_SCHEMA, DREACT_EXEC_BACKEND (local | docker | fargate | wasm | off). Shuts down gracefully on SIGINT/SIGTERM (in-flight
 * activities finish within DREACT_SHUTDOWN_GRACE_SECONDS or are retried elsewhere). DREACT_DEPLOYMENT_NAME +
 * DREACT_BUILD_ID: Worker Versioning (workers/deployment.ts).
 * DREACT_WORKER_ROLES (or `dreact worker --roles`): the roles this process runs, default all four,
 * each on its queue (DREACT_TASK_QUEUE_WORKFLOWS / _MODELS / _TOOLS / _EXEC; docs/worker-roles.md).
 * DREACT_METRICS_ADDR, DREACT_HEALTH_ADDR: Prometheus metrics and Kubernetes health (docs/metrics.md).
 */
import { openDb, migrate } from '../store/db';
import { Client } from '@temporalio/client';
import {
  TemporalConnectionError,
  connectTemporalClient,
  connectTemporalWorker,
  resolveTemporalConnection,
} from '../client/temporal/connection';
import { createWorker } from './worker';
import { workerToolSet } from './tool-set';
import { ensureExecReaperSchedule } from './exec-reaper-schedule';
import { shutdownGraceSeconds } from './deployment';
import { workerTuningFromEnv } from './tuning';
import { setupTelemetry } from './telemetry';
import { anthropicSdk } from '../activities/model/adapters/anthropic-sdk';
import { hostname } from 'node:os';
import { configuredTaskQueues, parseWorkerRoles } from '../core/turn/roles';
import { installRuntime, sampleTurnGauges, serveHealth } from './observability';
import { roleTuningFromEnv } from './tuning';
import { openActivityJournal, workerStateDir } from './activity-journal';
import { watchForOrphanedActivities } from './orphaned-activities';

async function main(): Promise<void> {
  // Before the first connection: the runtime's metrics exporter (DREACT_METRICS_ADDR or OTLP).
  const metricsLine = installRuntime();
  const temporal = resolveTemporalConnection();
  const { address, namespace } = temporal;
  const roles = parseWorkerRoles(process.env.DREACT_WORKER_ROLES, 'DREACT_WORKER_ROLES');
  const queues = configuredTaskQueues(process.env);
  const tuning = workerTuningFromEnv();
  const roleWorker = roleTuningFromEnv();
  const db = openDb({ max: tuning.dbPoolMax });
  const loadedMs = Math.round(process.uptime() * 1000);
  // The journal's queue key: the queues of the roles this process runs (a restarted process with the
  // same roles releases its predecessor's activities; workers/orphaned-activities.ts).
  const taskQueue = roles.map((r) => queues[r]).join('+');
  const identity = `${process.pid}@${hostname()}`;
  // The activities this worker runs, so the next worker on this host can release them if it dies
  // (DREACT_WORKER_STATE_DIR=off: no journal).
  const stateDir = workerStateDir();
  const journal =
    stateDir === 'off' ? undefined : openActivityJournal(stateDir, { identity, address, namespace, taskQueue });
  const connecting = connectTemporalWorker(temporal);
  // A dead predecessor's (or sibling's) activities are released as soon as the server answers, and
  // every second after — before migrations, the sandbox probe and the worker's build (~1–2 s): their
  // retries wait in the task queue for the first poller instead of for their heartbeat timeouts (2 s
  // for a decision round), which a slow start would otherwise reach first.
  const orphans = journal
    ? connecting.then((connection) =>
        watchForOrphanedActivities({
          dir: stateDir,
          connection,
          self: { pid: process.pid, identity, address, namespace, taskQueue },
          ownJournal: journal.file,
        }),
      )
    : undefined;
  void orphans?.catch(() => undefined); // a failed connection fails the start below, once
  // All three wait: migrations (usually none to apply), the server connection and the sandbox probe
  // overlap. The tools: exec.python on the backend DREACT_EXEC_BACKEND names (workers/tool-set.ts,
  // shared with the embedded stack).
  const [, connection, { extraTools, fargate }] = await Promise.all([
    migrate(db),
    connecting,
    workerToolSet({ log: (line) => console.error(`[worker] ${line}`) }),
  ]);
  const connectedMs = Math.round(process.uptime() * 1000);
  const creating = createWorker({
    connection,
    db,
    namespace,
    roles,
    queues,
    roleWorker,
    journal,
    extraTools,
    fargate,
    // Shutdown drains: in-flight activities get this long to finish before they are cancelled (and
    // retried on another worker).
    worker: { identity, shutdownGraceTime: `${shutdownGraceSeconds()} seconds` },
  });
  // Worker.create leaves this thread idle while its workflow thread loads the SDK and builds its
  // context (~0.5 s): the Anthropic SDK, needed at the first model call, loads meanwhile.
  setImmediate(() => anthropicSdk());
  const worker = await creating;
  // The exec reaper (Fargate) is scheduled by the process that runs exec; it runs on the workflows queue.
  if (fargate && roles.includes('exec')) {
    const clientConnection = await connectTemporalClient(temporal);
    const id = await ensureExecReaperSchedule(
      new Client({
        connection: clientConnection,
        interceptors: setupTelemetry().clientInterceptors,
        namespace,
      }),
      { taskQueue: queues.workflows },
    );
    console.error(`[worker] exec reaper schedule ${id} is in place`);
    await clientConnection.close();
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`[worker] ${signal} again: exiting now (in-flight activities retry on another worker)`);
      process.exit(130);
    }
    stopping = true;
    console.error(
      `[worker] ${signal}: draining — no new tasks; in-flight activities have ${shutdownGraceSeconds()} s ` +
        '(DREACT_SHUTDOWN_GRACE_SECONDS) to finish, then they are cancelled and retried elsewhere',
    );
    worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const version = worker.options.workerDeploymentOptions?.version;
  const health = process.env.DREACT_HEALTH_ADDR?.trim()
    ? await serveHealth(process.env.DREACT_HEALTH_ADDR, worker)
    : undefined;
  const stopGauges = metricsLine && roles.includes('workflows') ? sampleTurnGauges(connection, namespace) : undefined;
  if (metricsLine) console.error(`[worker] ${metricsLine}`);
  if (health) console.error(`[worker] health on http://${process.env.DREACT_HEALTH_ADDR?.trim()}/healthz and /readyz`);
  console.error(
    `[worker] polling ${roles.map((r) => `${r}: ${queues[r]}`).join(', ')} on ${address}, namespace ${namespace} (db schema ${db.schema})` +
      (version ? `, deployment ${version.deploymentName} build ${version.buildId}` : '') +
      ` — started in ${Math.round(process.uptime() * 1000)} ms (code loaded at ${loadedMs}, ` +
      `database and server ready at ${connectedMs})`,
  );
  const running = worker.run();
  await running;
  stopGauges?.();
  health?.close();
  await (await orphans)?.stop();
  // Stopped cleanly: every activity ended or was cancelled; nothing is left to release.
  journal?.remove();
  await connection.close();
  await db.close();
}

main().catch((err) => {
  // A refused connection is its one line (the setting to fix); anything else with its stack.
  const text = err instanceof TemporalConnectionError ? err.message : err instanceof Error ? err.stack : String(err);
  console.error(`[worker] fatal: ${text}`);
  process.exit(1);
});
