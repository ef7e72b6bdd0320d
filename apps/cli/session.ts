/**
 * A CLI session: connects to a running stack (`dreact dev`, or one another CLI invocation started),
 * to an external one (a configured Temporal — TEMPORAL_ADDRESS, a temporal.toml profile or
 * --address, client/temporal/connection.ts — + DATABASE_URL), or starts the embedded stack for the
 * duration of the command.
 */
import { Client } from '@temporalio/client';
import { connectTemporalClient, resolveTemporalConnection } from '../../client/temporal/connection';
import { cliConnectionFlags } from './cli-connection';
import { installCliRuntime } from './cli-runtime';
import { openDb, type Db } from '../../store/db';
import { DreactClient, DreactError } from '../../client/api';
import { connectToRunningStack, startEmbeddedStack, type StackInfo } from '../stack/embedded';
import { setupTelemetry } from '../../workers/telemetry';
import { configuredTaskQueues } from '../../core/turn/roles';

export interface Session {
  api: DreactClient;
  temporal: Client;
  db: Db;
  info: Pick<StackInfo, 'temporalAddress' | 'uiUrl' | 'databaseUrl' | 'pglite'> & { namespace: string };
  /** How this session reached a stack. */
  origin: 'running-stack' | 'external' | 'embedded';
  close(): Promise<void>;
}

/**
 * `agentFiles`: agent files the command names by path (`dreact turn --agent ./support.yaml`) — only
 * a worker this command starts can load them, so they need the embedded stack.
 */
/** The Temporal connection settings of this CLI invocation: temporal.toml < TEMPORAL_* < flags. */
export function cliTemporalConnection() {
  return resolveTemporalConnection(cliConnectionFlags());
}

export async function openSession(
  log: (line: string) => void,
  opts: { agentFiles?: readonly string[] } = {},
): Promise<Session> {
  installCliRuntime();
  const settings = cliTemporalConnection();
  const configured = settings.sources.address !== 'default';
  const running = await connectToRunningStack(undefined, settings);
  const files = opts.agentFiles ?? [];
  if (files.length > 0 && (running || (configured && process.env.DATABASE_URL))) {
    await running?.close();
    throw new DreactError(
      `--agent ${files[0]}: an agent file loads in the worker this command starts, but a stack is running already (${running ? 'dreact dev' : `Temporal at ${settings.address}`}): put the file in its agents folder (DREACT_AGENTS_DIR) and name the agent instead`,
      'bad_input',
    );
  }
  if (running) {
    return {
      api: new DreactClient(running.client),
      temporal: running.client,
      db: running.db,
      info: { ...running.info, namespace: running.client.options.namespace },
      origin: 'running-stack',
      close: running.close,
    };
  }
  if (configured && process.env.DATABASE_URL) {
    const connection = await connectTemporalClient(settings);
    const temporal = new Client({
      connection,
      interceptors: setupTelemetry().clientInterceptors,
      namespace: settings.namespace,
    });
    const db = openDb();
    return {
      api: new DreactClient(temporal, { taskQueue: configuredTaskQueues(process.env).workflows }),
      temporal,
      db,
      info: {
        temporalAddress: settings.address,
        namespace: settings.namespace,
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
    temporal: settings,
    publish: files.length === 0,
    log,
    ...(files.length > 0 ? { agents: { files } } : {}),
  });
  return {
    api: new DreactClient(stack.client),
    temporal: stack.client,
    db: stack.db,
    info: { ...stack.info, namespace: stack.client.options.namespace },
    origin: 'embedded',
    close: () => stack.stop(),
  };
}

export { workflowUrl } from './workflow-url';
