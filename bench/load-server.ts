/**
 * The Temporal server a load bench runs on: the dev server (`temporal server start-dev`, one
 * process, SQLite), or the production server (scripts/temporal-production: frontend, two history
 * hosts, matching and the system worker as separate processes on Postgres, mTLS + JWT). Each
 * gives the bench a client, the worker's TEMPORAL_* settings and the CPU its processes used so
 * far — per process for the production server, whose Postgres backends carry application_name
 * `temporal-<process>` so their CPU is measured apart from the worker's.
 */
import { Client } from '@temporalio/client';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { connectTemporalClient, resolveTemporalConnection } from '../client/temporal/connection';
import { startProductionTemporal } from '../scripts/temporal-production/cluster';
import { cpuSeconds, pidByCommandLine } from './worker-process';
import { freePort } from './peers/server-metrics';

export type LoadServerKind = 'dev' | 'production';

export interface LoadServer {
  kind: LoadServerKind;
  client: Client;
  workerEnv: Record<string, string>;
  /** CPU seconds each server process used so far, by name ("Temporal dev server"; "frontend", "history-0", …). */
  cpu(): Record<string, number>;
  /** The dev server's Prometheus endpoint port (`--metrics-port`): the peers comparison reads its state writes there. */
  metricsPort?: number;
  /** The dev server's pid (its CPU), for the peers comparison. */
  pid?: number;
  /** application_name pattern (SQL LIKE) of the server's own Postgres backends; none for the dev server (SQLite). */
  postgresBackends?: string;
  stop(): Promise<void>;
}

/** `--server` of `npm run bench -- load --server production` (bench/run.ts puts it in DREACT_BENCH_SERVER): production runs beside dev. */
export function loadServerKinds(value = process.env.DREACT_BENCH_SERVER ?? 'dev'): LoadServerKind[] {
  if (value === 'dev') return ['dev'];
  if (value === 'production') return ['dev', 'production'];
  throw new Error(`--server ${value}: expected dev or production (production runs beside dev, in one run)`);
}

const safeCpu = (pid: number | undefined) => {
  if (pid === undefined) return NaN;
  try {
    return cpuSeconds(pid);
  } catch {
    return NaN; // the process is gone
  }
};

export async function startLoadServer(kind: LoadServerKind): Promise<LoadServer> {
  if (kind === 'dev') {
    const metricsPort = await freePort();
    const server = await startTemporalServer({ extraArgs: ['--metrics-port', String(metricsPort)] });
    const pid = pidByCommandLine('temporal', 'start-dev', `--port ${server.address.split(':').pop()}`);
    return {
      kind,
      metricsPort,
      ...(pid !== undefined ? { pid } : {}),
      client: server.env.client,
      workerEnv: { TEMPORAL_ADDRESS: server.address },
      cpu: (): Record<string, number> => (pid === undefined ? {} : { 'Temporal dev server': safeCpu(pid) }),
      stop: () => server.stop(),
    };
  }
  const cluster = await startProductionTemporal({ log: (l) => console.error(l) });
  const connection = await connectTemporalClient(resolveTemporalConnection({ env: cluster.env }));
  return {
    kind,
    client: new Client({ connection, namespace: cluster.namespace }),
    workerEnv: cluster.env,
    cpu: () =>
      Object.fromEntries(
        cluster
          .processes()
          .map((p) => [
            p.service === 'history' ? `history-${p.index}` : p.service === 'worker' ? 'system worker' : p.service,
            safeCpu(p.pid),
          ]),
      ),
    postgresBackends: 'temporal-%',
    async stop() {
      await connection.close();
      await cluster.stop();
    },
  };
}
