/**
 * A CLI session: connects to a running stack (`dreact dev`, or one another CLI invocation started),
 * to an external one (TEMPORAL_ADDRESS + DATABASE_URL), or starts the embedded stack for the
 * duration of the command.
 */
import { Client, Connection } from '@temporalio/client';
import { guardedConnection } from '../temporal/closed-channel';
import { openDb, type Db } from '../../store/db';
import { DreactClient, DreactError } from '../api';
import { connectToRunningStack, startEmbeddedStack, type StackInfo } from '../stack/embedded';
import { setupTelemetry } from '../../workers/telemetry';
import { configuredTaskQueues } from '../../core/turn/roles';

export interface Session {
  api: DreactClient;
  temporal: Client;
  db: Db;
  info: Pick<StackInfo, 'temporalAddress' | 'uiUrl' | 'databaseUrl' | 'pglite'>;
  /** How this session reached a stack. */
  origin: 'running-stack' | 'external' | 'embedded';
  close(): Promise<void>;
}

/**
 * `agentFiles`: agent files the command names by path (`dreact turn --agent ./support.yaml`) — only
 * a worker this command starts can load them, so they need the embedded stack.
 */
export async function openSession(
  log: (line: string) => void,
  opts: { agentFiles?: readonly string[] } = {},
): Promise<Session> {
  const running = await connectToRunningStack();
  const files = opts.agentFiles ?? [];
  if (files.length > 0 && (running || (process.env.TEMPORAL_ADDRESS && process.env.DATABASE_URL))) {
    await running?.close();
    throw new DreactError(
      `--agent ${files[0]}: an agent file loads in the worker this command starts, but a stack is running already (${running ? 'dreact dev' : 'TEMPORAL_ADDRESS'}): put the file in its agents folder (DREACT_AGENTS_DIR) and name the agent instead`,
      'bad_input',
    );
  }
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
    const connection = await Connection.connect({
      address: process.env.TEMPORAL_ADDRESS,
      plugins: [guardedConnection],
    });
    const temporal = new Client({
      connection,
      interceptors: setupTelemetry().clientInterceptors,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
    const db = openDb();
    return {
      api: new DreactClient(temporal, { taskQueue: configuredTaskQueues(process.env).workflows }),
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
  // A stack started for agent files is this command's own: other commands must not use it.
  const stack = await startEmbeddedStack({
    publish: files.length === 0,
    log,
    ...(files.length > 0 ? { agents: { files } } : {}),
  });
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
