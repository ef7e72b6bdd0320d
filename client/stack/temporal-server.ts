/**
 * Starts `temporal server start-dev` through the SDK's TestWorkflowEnvironment.createLocal, with
 * our search attributes registered, an optional on-disk database (state survives restarts) and
 * the Web UI. TEMPORAL_ADDRESS selects an existing server instead.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConversationIdKey, TurnIndexKey, TurnStatusKey } from '../../workflows/definitions';
import { ensureTemporalCli } from './temporal-cli';

export interface TemporalServerOptions {
  /** SQLite file for persistence; in-memory when omitted. */
  dbFilename?: string;
  port?: number;
  ui?: boolean;
  uiPort?: number;
  /** Use this server instead of starting one (default: env TEMPORAL_ADDRESS). */
  address?: string;
}

export interface TemporalServer {
  env: TestWorkflowEnvironment;
  address: string;
  uiUrl?: string;
  /** True when we started the server (and stop() stops it). */
  owned: boolean;
  stop(): Promise<void>;
}

export const SEARCH_ATTRIBUTE_KEYS = [ConversationIdKey, TurnIndexKey, TurnStatusKey];

export async function startTemporalServer(opts: TemporalServerOptions = {}): Promise<TemporalServer> {
  const address = opts.address ?? process.env.TEMPORAL_ADDRESS;
  if (address) {
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    return { env, address, uiUrl: process.env.DREACT_TEMPORAL_UI_URL, owned: false, stop: () => env.teardown() };
  }
  const path = ensureTemporalCli();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: path ? { type: 'existing-path', path } : { type: 'cached-download' },
      ip: '127.0.0.1',
      port: opts.port,
      dbFilename: opts.dbFilename,
      ui: opts.ui ?? false,
      uiPort: opts.uiPort,
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      log: { format: 'pretty', level: 'error' },
    },
  });
  const uiUrl = opts.ui ? `http://127.0.0.1:${opts.uiPort ?? (Number(env.address.split(':').pop()) + 1000)}` : undefined;
  return { env, address: env.address, uiUrl, owned: true, stop: () => env.teardown() };
}
