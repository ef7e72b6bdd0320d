/**
 * `dreact gateway [--port N] [--host H]`: serves the HTTP gateway (apps/gateway) against the
 * stack this CLI reaches (a running `dreact dev`, a configured Temporal + DATABASE_URL, or the embedded
 * one), with the periodic stream prune. Configuration from the environment: see apps/gateway/server.ts.
 */
import { gatewayConfigFromEnv, startGateway } from '../gateway/server';
import pino from 'pino';
import { withSession } from './with-session';

const err = (line: string) => process.stderr.write(`${line}\n`);

export async function gatewayCommand(opts: { port?: number; host?: string }): Promise<void> {
  const config = gatewayConfigFromEnv(); // before any connection: bad settings → a clear error, nothing started
  await withSession(async (s) => {
    const gw = await startGateway({
      client: s.api,
      pool: s.db.pool,
      apiKeys: config.apiKeys,
      insecure: config.insecure,
      ...(config.tokenSecret ? { tokenSecret: config.tokenSecret } : {}),
      corsOrigins: config.corsOrigins,
      hostnames: config.hostnames,
      // Only a UI the operator made public (the stack's own UI address is internal).
      ...(config.publicTemporalUiUrl
        ? { temporalUiUrl: config.publicTemporalUiUrl, temporalNamespace: s.info.namespace }
        : {}),
      allowScripted: config.allowScripted,
      models: config.models,
      rateLimitPerMinute: config.rateLimitPerMinute,
      trustedProxies: config.trustedProxies,
      hookRateLimitPerMinute: config.hookRateLimitPerMinute,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      // One JSON line per request (and per internal error), with its request id.
      logger: pino({ name: 'dreact-gateway' }),
      port: opts.port ?? config.port,
      host: opts.host ?? config.host,
      retentionSeconds: config.retentionSeconds,
      // PGlite does not deliver NOTIFY: readers poll.
      listen: !s.info.pglite,
      pollMs: s.info.pglite ? 100 : 250,
      log: err,
    });
    if (config.allowScripted) err('[gateway] DREACT_ALLOW_SCRIPTED=1: clients may choose the scripted test model');
    if (config.insecure) err('[gateway] INSECURE: requests without a key read as the local tenant; writes are refused');
    console.log(
      `gateway: ${gw.url} (keys from Postgres${config.apiKeys.length ? ` + ${config.apiKeys.length} from DREACT_API_KEYS` : ''}; stream events kept ${config.retentionSeconds} s)`,
    );
    console.log('Ready. Ctrl-C stops the gateway.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    err('[gateway] stopping…');
    await gw.close();
  });
}
