/**
 * The Temporal side of the chaos storm: the dev server on a database file (restarted by stopping
 * and starting it), or the production server (scripts/temporal-production: frontend, two history
 * hosts, matching and the system worker as processes, mTLS + JWT, its persistence on the storm's
 * own Postgres cluster — so the storm's Postgres restart hits Temporal too), whose "restart" is a
 * history host killed with SIGKILL and started again while turns run.
 */
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { startTemporalServer, type TemporalServer } from '../../apps/stack/temporal-server';
import { connectTemporalClient, resolveTemporalConnection } from '../../client/temporal/connection';
import { startProductionTestTemporal, type ProductionTemporal } from '../support/production-temporal';

export type StormServer = 'dev' | 'production';

export interface StormTemporal {
  /** TEMPORAL_* for the worker processes. */
  workerEnv: Record<string, string>;
  client: Client;
  /** What restart() does, for the log. */
  restartLabel: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startStormTemporal(
  kind: StormServer,
  opts: { home: string; port: number; postgresUrl: string; log: (line: string) => void },
): Promise<StormTemporal> {
  if (kind === 'production') {
    const cluster: ProductionTemporal = await startProductionTestTemporal({
      databaseUrl: opts.postgresUrl,
      home: join(opts.home, 'temporal-production'),
      databasePrefix: 'temporal_chaos',
      log: opts.log,
    });
    const connection = await connectTemporalClient(resolveTemporalConnection({ env: cluster.env }));
    return {
      workerEnv: cluster.env,
      client: new Client({ connection, namespace: cluster.namespace }),
      restartLabel: 'kill -9 history host 0 of 2, then start it again',
      async restart() {
        await cluster.kill('history', 0);
        await sleep(500);
        await cluster.restart('history', 0);
      },
      async stop() {
        await connection.close();
        await cluster.stop();
      },
    };
  }
  const serverOpts = {
    port: opts.port,
    dbFilename: join(opts.home, 'temporal.db'),
    logFile: join(opts.home, 'temporal.log'),
    ui: false,
    extraArgs: [],
  };
  let server: TemporalServer = await startTemporalServer(serverOpts);
  const address = `127.0.0.1:${opts.port}`;
  const connection = await connectTemporalClient(resolveTemporalConnection({ env: {}, defaults: { address } }));
  return {
    workerEnv: { TEMPORAL_ADDRESS: address },
    client: new Client({ connection }),
    restartLabel: 'restart the Temporal server',
    async restart() {
      await server.stop();
      await sleep(500);
      server = await startTemporalServer(serverOpts);
    },
    async stop() {
      await connection.close();
      await server.stop();
    },
  };
}
