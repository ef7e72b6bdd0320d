/**
 * A CLI session: connects to a running stack (`dreact dev`, or one another CLI invocation started),
 * to an external one (TEMPORAL_ADDRESS + DATABASE_URL), or starts the embedded stack for the
 * duration of the command.
 */
import { Client, Connection } from '@temporalio/client';
import { openDb, type Db } from '../../store/db';
import { DreactClient } from '../api';
import { connectToRunningStack, startEmbeddedStack, type StackInfo } from '../stack/embedded';
import { setupTelemetry } from '../../workers/telemetry';

export interface Session {
  api: DreactClient;
  temporal: Client;
  db: Db;
  info: Pick<StackInfo, 'temporalAddress' | 'uiUrl' | 'databaseUrl' | 'pglite'>;
  /** How this session reached a stack. */
  origin: 'running-stack' | 'external' | 'embedded';
  close(): Promise<void>;
}

export async function openSession(log: (line: string) => void): Promise<Session> {
  const running = await connectToRunningStack();
  if (running) {
    return {
      api: new DreactClient(running.client),
      temporal: running.client,
      db: running.db,
      info: running.info,
      origin: 'running-stack',
      close: running.close,
    };
  }
  if (process.env.TEMPORAL_ADDRESS && process.env.DATABASE_URL) {
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    const temporal = new Client({
      connection,
      interceptors: setupTelemetry().clientInterceptors,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
    const db = openDb();
    return {
      api: new DreactClient(temporal, { taskQueue: process.env.DREACT_TASK_QUEUE }),
      temporal,
      db,
      info: {
        temporalAddress: process.env.TEMPORAL_ADDRESS,
        databaseUrl: db.databaseUrl,
        pglite: false,
        uiUrl: process.env.DREACT_TEMPORAL_UI_URL,
      },
      origin: 'external',
      async close() {
        await connection.close();
        await db.close();
      },
    };
  }
  log('[dreact] no running stack: starting the embedded one (Temporal dev server + Postgres/PGlite + worker)…');
  const stack = await startEmbeddedStack({ publish: true, log });
  return {
    api: new DreactClient(stack.client),
    temporal: stack.client,
    db: stack.db,
    info: stack.info,
    origin: 'embedded',
    close: () => stack.stop(),
  };
}

export function workflowUrl(uiUrl: string | undefined, workflowId: string): string | undefined {
  return uiUrl
    ? `${uiUrl}/namespaces/${process.env.TEMPORAL_NAMESPACE ?? 'default'}/workflows/${encodeURIComponent(workflowId)}`
    : undefined;
}
