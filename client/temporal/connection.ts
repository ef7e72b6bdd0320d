/**
 * The one way durable-react connects to Temporal: Temporal's own client configuration
 * (`@temporalio/envconfig`, the rules of the `temporal` CLI). A profile of `temporal.toml`
 * (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE, else `default`),
 * overridden by the standard variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
 * TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_*), overridden by
 * the CLI's flags. Every connection — worker, CLI, gateway, embedded stack pointed elsewhere,
 * benches, examples — is built from `resolveTemporalConnection` by `connectTemporalClient` or
 * `connectTemporalWorker`, and a refusal reads as one line naming the setting to fix
 * (`describeConnectionError`, client/temporal/connection-errors.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { guardedConnection } from './closed-channel';
import { classifyConnectionError, describeConnectionError, probeTransport } from './connection-errors';
import {
  TEMPORAL_SETTINGS,
  TemporalConnectionError,
  settingName,
  type ResolveTemporalConnectionOptions,
  type ResolvedTemporalConnection,
  type SettingSource,
  type TemporalConnectionFlags,
  type TemporalSetting,
} from './connection-settings';

export * from './connection-settings';
export { describeConnectionError, classifyConnectionError, probeTransport } from './connection-errors';

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

type Env = Record<string, string>;

function definedEnv(env: NodeJS.ProcessEnv): Env {
  const out: Env = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** The file envconfig reads when no --config-file is given (for display and the missing-file check). */
function defaultConfigFile(env: Env): string | undefined {
  const dir = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : undefined);
  return dir ? join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/** The value of one setting in a profile (for source attribution; presence only). */
function settingOf(p: ClientConfigProfile, s: TemporalSetting): unknown {
  switch (s) {
    case 'address':
      return p.address;
    case 'namespace':
      return p.namespace;
    case 'apiKey':
      return p.apiKey;
    case 'tls':
      return p.tls?.disabled;
    case 'clientCert':
      return p.tls?.clientCert;
    case 'clientKey':
      return p.tls?.clientKey;
    case 'serverCACert':
      return p.tls?.serverCACert;
    case 'serverName':
      return p.tls?.serverName;
    case 'metadata':
      return p.grpcMeta && Object.keys(p.grpcMeta).length > 0 ? p.grpcMeta : undefined;
  }
}

const FLAG_OF: Partial<Record<TemporalSetting, keyof TemporalConnectionFlags>> = {
  address: 'address',
  namespace: 'namespace',
  tls: 'tls',
  clientCert: 'tlsCertPath',
  clientKey: 'tlsKeyPath',
  serverCACert: 'tlsCaPath',
  serverName: 'tlsServerName',
};

function withFlags(p: ClientConfigProfile, f: TemporalConnectionFlags): ClientConfigProfile {
  const tls = { ...p.tls };
  if (f.tls !== undefined) tls.disabled = !f.tls;
  if (f.tlsCertPath) tls.clientCert = { path: f.tlsCertPath };
  if (f.tlsKeyPath) tls.clientKey = { path: f.tlsKeyPath };
  if (f.tlsCaPath) tls.serverCACert = { path: f.tlsCaPath };
  if (f.tlsServerName) tls.serverName = f.tlsServerName;
  return {
    ...p,
    ...(f.address ? { address: f.address } : {}),
    ...(f.namespace ? { namespace: f.namespace } : {}),
    ...(p.tls || Object.keys(tls).length > 0 ? { tls } : {}),
  };
}

const pathOf = (source: { path: string } | { data: unknown } | undefined) =>
  source && 'path' in source ? source.path : undefined;

/**
 * Resolves the connection settings: config file profile < variables < flags < nothing (`defaults`).
 * Throws a clear error naming the setting for a bad one (a missing file or profile, a certificate
 * without its key, an unreadable certificate, an address that is not host:port).
 */
export function resolveTemporalConnection(opts: ResolveTemporalConnectionOptions = {}): ResolvedTemporalConnection {
  const env = definedEnv(opts.env ?? process.env);
  const flags = opts.flags ?? {};
  const configFileFrom = opts.configFile ? 'flag' : env.TEMPORAL_CONFIG_FILE ? 'env' : 'default';
  const namedFile = opts.configFile || env.TEMPORAL_CONFIG_FILE || undefined;
  if (namedFile && !existsSync(namedFile))
    throw new TemporalConnectionError(
      `${configFileFrom === 'flag' ? '--config-file' : 'TEMPORAL_CONFIG_FILE'}=${namedFile}: no such file`,
      'configFile',
    );
  const candidate = namedFile ?? defaultConfigFile(env);
  const configFile = candidate && existsSync(candidate) ? candidate : undefined;
  const profileFrom = opts.profile ? 'flag' : env.TEMPORAL_PROFILE ? 'env' : 'default';
  const profile = opts.profile || env.TEMPORAL_PROFILE || 'default';
  if (profileFrom !== 'default' && !configFile)
    throw new TemporalConnectionError(
      `${profileFrom === 'flag' ? '--profile' : 'TEMPORAL_PROFILE'}=${profile}: no temporal.toml to read it from ` +
        `(${candidate ?? 'set TEMPORAL_CONFIG_FILE'}${candidate ? ' does not exist' : ''})`,
      'profile',
    );
  // The TypeScript SDK always verifies the server's host name: say so instead of ignoring the setting.
  if (/^(1|true)$/.test(env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION ?? ''))
    throw new TemporalConnectionError(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: the TypeScript SDK cannot turn host verification off; set ' +
        "TEMPORAL_TLS_SERVER_NAME to the name in the server's certificate instead",
      'serverName',
    );
  const load = (which: { disableFile?: boolean; disableEnv?: boolean }) => {
    try {
      return loadClientConfigProfile({
        ...which,
        profile,
        ...(configFile ? { configSource: { path: configFile } } : {}),
        ...(configFile ? {} : { disableFile: true }),
        overrideEnvVars: env,
      });
    } catch (err) {
      const e = err as Error & { line?: number; column?: number };
      // A TOML syntax error comes with a drawing of the line: keep its first line and the position.
      const msg = `${e.message.split('\n')[0]}${e.line !== undefined ? ` (line ${e.line}, column ${e.column})` : ''}`;
      const where = configFile ?? 'no temporal.toml';
      throw new TemporalConnectionError(
        /not found in config data/.test(e.message)
          ? `${profileFrom === 'flag' ? '--profile' : 'TEMPORAL_PROFILE'}=${profile}: no profile "${profile}" in ${where}`
          : `${configFile ?? 'temporal.toml'}: ${msg}`,
        'profile',
      );
    }
  };
  const fromFile: ClientConfigProfile = configFile ? load({ disableEnv: true }) : {};
  const fromEnv: ClientConfigProfile = load({ disableFile: true });
  const merged = withFlags(configFile ? load({}) : fromEnv, flags);
  const fileSource: SettingSource = profile === 'default' ? 'file' : 'profile';
  const sources: ResolvedTemporalConnection['sources'] = {};
  for (const s of TEMPORAL_SETTINGS) {
    const flag = FLAG_OF[s];
    if (flag && flags[flag] !== undefined && flags[flag] !== '') sources[s] = 'flag';
    else if (settingOf(fromEnv, s) !== undefined) sources[s] = 'env';
    else if (settingOf(fromFile, s) !== undefined) sources[s] = fileSource;
    else if (s === 'address' || s === 'namespace') sources[s] = 'default';
  }
  const partial = { sources, profile, configFile, profileFrom, configFileFrom } as const;
  const name = (s: TemporalSetting) => settingName({ ...partial }, s);
  const tlsConf = merged.tls;
  if (tlsConf && !tlsConf.disabled && Boolean(tlsConf.clientCert) !== Boolean(tlsConf.clientKey)) {
    const [has, lacks] = tlsConf.clientCert ? ['clientCert', 'clientKey'] : ['clientKey', 'clientCert'];
    throw new TemporalConnectionError(
      `${name(has as TemporalSetting)} is set but ${name(lacks as TemporalSetting)} is not: mTLS needs the client certificate and its key`,
      lacks as TemporalSetting,
    );
  }
  let connect: ReturnType<typeof toClientOptions>;
  try {
    connect = toClientOptions(merged);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const which = (['clientCert', 'clientKey', 'serverCACert'] as const).find((s) => {
      const p = pathOf(tlsConf?.[s]);
      return p !== undefined && e.message.includes(p);
    });
    throw new TemporalConnectionError(
      which ? `${name(which)}=${pathOf(tlsConf?.[which])}: cannot read it (${e.code ?? e.message})` : e.message,
      which ?? 'tls',
    );
  }
  const address = merged.address || opts.defaults?.address || DEFAULT_TEMPORAL_ADDRESS;
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):\d{1,5}$/.test(address))
    throw new TemporalConnectionError(
      `${name('address')}=${JSON.stringify(address)}: expected host:port (e.g. 127.0.0.1:7233 or <namespace>.<account>.tmprl.cloud:7233)`,
      'address',
    );
  const options = connect.connectionOptions;
  return {
    address,
    namespace: merged.namespace || opts.defaults?.namespace || DEFAULT_TEMPORAL_NAMESPACE,
    ...(options.tls !== undefined ? { tls: options.tls as TLSConfig | boolean } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey as string } : {}),
    ...(merged.grpcMeta && Object.keys(merged.grpcMeta).length > 0 ? { metadata: merged.grpcMeta } : {}),
    sources,
    profile,
    profileFrom,
    configFile,
    configFileFrom,
    tlsFiles: {
      clientCert: pathOf(tlsConf?.clientCert),
      clientKey: pathOf(tlsConf?.clientKey),
      serverCACert: pathOf(tlsConf?.serverCACert),
    },
  };
}

/** A connection to a server we started ourselves (the embedded dev server, a test's): no file, no variables. */
export function localTemporalConnection(address: string, namespace = DEFAULT_TEMPORAL_NAMESPACE) {
  return resolveTemporalConnection({ env: {}, defaults: { address, namespace } });
}

/** The SDK's connection options of a resolved connection (TLS, API key, gRPC metadata). */
export function connectionOptionsOf(resolved: ResolvedTemporalConnection) {
  return {
    address: resolved.address,
    ...(resolved.tls !== undefined ? { tls: resolved.tls } : {}),
    ...(resolved.apiKey !== undefined ? { apiKey: resolved.apiKey } : {}),
    // A copy: the client adds its own headers (client-name, client-version) to the object it is given.
    ...(resolved.metadata ? { metadata: { ...resolved.metadata } } : {}),
  };
}

export interface ConnectOptions {
  connectTimeout?: ConnectionOptions['connectTimeout'];
  /** Check that the namespace exists (default true): an unknown one fails here, as one line. */
  checkNamespace?: boolean;
}

async function checked<T extends { close(): Promise<void> }>(
  resolved: ResolvedTemporalConnection,
  opts: ConnectOptions,
  connecting: () => Promise<T>,
  describeNamespace: (c: T) => Promise<unknown>,
): Promise<T> {
  let connection: T | undefined;
  try {
    connection = await connecting();
    if (opts.checkNamespace ?? true) await describeNamespace(connection);
    return connection;
  } catch (err) {
    await connection?.close().catch(() => undefined);
    throw await connectionFailure(err, resolved);
  }
}

/**
 * The error to throw for a failed connection: one line naming the setting. When the transport
 * said only that it could not connect, the handshake is repeated with Node's TLS to learn why.
 */
export async function connectionFailure(
  err: unknown,
  resolved: ResolvedTemporalConnection,
): Promise<TemporalConnectionError> {
  if (err instanceof TemporalConnectionError) return err;
  const kind = classifyConnectionError(err);
  const probed =
    kind === undefined || kind === 'unreachable' ? await probeTransport(resolved).catch(() => undefined) : undefined;
  return new TemporalConnectionError(describeConnectionError(probed ?? err, resolved), undefined, err);
}

/** A client `Connection` (always with the closed-channel guard), namespace checked. */
export function connectTemporalClient(
  resolved: ResolvedTemporalConnection,
  opts: ConnectOptions = {},
): Promise<Connection> {
  return checked(
    resolved,
    opts,
    () =>
      Connection.connect({
        ...connectionOptionsOf(resolved),
        ...(opts.connectTimeout !== undefined ? { connectTimeout: opts.connectTimeout } : {}),
        plugins: [guardedConnection],
      }),
    (c) => c.workflowService.describeNamespace({ namespace: resolved.namespace }),
  );
}

/** A worker's `NativeConnection`, namespace checked. */
export function connectTemporalWorker(
  resolved: ResolvedTemporalConnection,
  opts: Omit<ConnectOptions, 'connectTimeout'> = {},
): Promise<NativeConnection> {
  return checked(
    resolved,
    opts,
    () => NativeConnection.connect(connectionOptionsOf(resolved)),
    (c) => c.workflowService.describeNamespace({ namespace: resolved.namespace }),
  );
}
