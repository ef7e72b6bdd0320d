/**
 * `npm run temporal:production -- install`: builds the production Temporal server (build.ts) once.
 * `npm run temporal:production -- start [--port 7933] [--home DIR] [--namespace dreact]`: starts it
 * on loopback (cluster.ts) on Postgres (DATABASE_URL's server, else 127.0.0.1:5432; databases
 * temporal_prod and temporal_prod_visibility, kept between runs, as are the certificates and the
 * JWT key in DIR, default $DREACT_HOME/temporal-production or ./.dreact/temporal-production),
 * prints the TEMPORAL_* settings a worker, the CLI and the gateway need, writes them as a
 * `temporal.toml` profile and an env file, and runs until Ctrl-C.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureProductionServer } from './build';
import { startProductionTemporal } from './cluster';
import { temporalTomlProfile } from './config';

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      home: { type: 'string' },
      namespace: { type: 'string' },
      'log-level': { type: 'string' },
    },
  });
  const command = positionals[0] ?? 'start';
  const log = (l: string) => console.error(l);
  if (command === 'install') {
    const build = ensureProductionServer(log);
    console.log(`temporal-server: ${build.server}\ntemporal-sql-tool: ${build.sqlTool}\nschema: ${build.schemaDir}`);
    return 0;
  }
  if (command !== 'start') {
    console.error(`unknown command ${JSON.stringify(command)}: use install or start`);
    return 2;
  }
  const port = values.port === undefined ? 7933 : Number(values.port);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    console.error(`--port ${values.port}: expected a port number`);
    return 2;
  }
  const home = resolve(values.home ?? join(process.env.DREACT_HOME ?? '.dreact', 'temporal-production'));
  const cluster = await startProductionTemporal({
    home,
    port,
    databasePrefix: 'temporal_prod',
    dropDatabases: false,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values['log-level'] ? { logLevel: values['log-level'] } : {}),
    log,
  });
  const e = cluster.env;
  const toml = temporalTomlProfile(e, 'production');
  writeFileSync(join(home, 'temporal.toml'), toml, { mode: 0o600 });
  const envFile = join(home, 'env');
  writeFileSync(
    envFile,
    Object.entries(e)
      .map(([k, v]) => `export ${k}=${v}\n`)
      .join(''),
    { mode: 0o600 },
  );
  writeFileSync(join(home, 'admin-token'), `${cluster.tokens.admin}\n`, { mode: 0o600 });
  console.log(
    [
      `production Temporal server on ${cluster.address} (mTLS + JWT), namespace ${cluster.namespace}`,
      `  processes: ${cluster
        .processes()
        .map((p) => `${p.service}${p.service === 'history' ? `-${p.index}` : ''} (pid ${p.pid})`)
        .join(', ')}`,
      `  logs: ${join(home, 'logs')}`,
      `  a worker, the CLI or the gateway: source ${envFile}`,
      `  or the profile: TEMPORAL_CONFIG_FILE=${join(home, 'temporal.toml')} TEMPORAL_PROFILE=production`,
      `  admin token (temporal-system:admin): ${join(home, 'admin-token')}`,
      'Ctrl-C stops it.',
    ].join('\n'),
  );
  await new Promise<void>((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
  console.error('[temporal-production] stopping…');
  await cluster.stop();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[temporal-production] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
