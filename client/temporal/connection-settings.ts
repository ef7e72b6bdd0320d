/**
 * The settings of a Temporal connection (client/temporal/connection.ts): their names as variables,
 * profile fields and flags, where each came from, and the error a wrong one raises.
 */
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';

/** Where a setting came from: the config file's `default` profile, a named profile, a variable, a flag, or ours. */
export type SettingSource = 'file' | 'profile' | 'env' | 'flag' | 'default';

export const TEMPORAL_SETTINGS = [
  'address',
  'namespace',
  'apiKey',
  'tls',
  'clientCert',
  'clientKey',
  'serverCACert',
  'serverName',
  'metadata',
] as const;
export type TemporalSetting = (typeof TEMPORAL_SETTINGS)[number];

/** The CLI's connection flags (the `temporal` CLI's names). The API key has none: a flag shows in `ps`. */
export interface TemporalConnectionFlags {
  address?: string;
  namespace?: string;
  tls?: boolean;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  tlsCaPath?: string;
  tlsServerName?: string;
}

export interface ResolveTemporalConnectionOptions {
  /** The environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** `--config-file`: this file instead of TEMPORAL_CONFIG_FILE / the default location. */
  configFile?: string;
  /** `--profile`: this profile instead of TEMPORAL_PROFILE / `default`. */
  profile?: string;
  /** The CLI's other connection flags; a flag wins over everything. */
  flags?: TemporalConnectionFlags;
  /** What an unset address / namespace means (default 127.0.0.1:7233 and `default`). */
  defaults?: { address?: string; namespace?: string };
}

export interface ResolvedTemporalConnection {
  address: string;
  namespace: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
  /** Where each setting that is set came from (address and namespace always). */
  sources: Partial<Record<TemporalSetting, SettingSource>>;
  /** The profile read from the config file, and where that name came from. */
  profile: string;
  profileFrom: 'flag' | 'env' | 'default';
  /** The config file read (undefined: none exists), and where its name came from. */
  configFile?: string;
  configFileFrom: 'flag' | 'env' | 'default';
  /** The certificate files in use, by path (inline `*_data` shows as undefined); contents never. */
  tlsFiles: { clientCert?: string; clientKey?: string; serverCACert?: string };
}

/** The variable and config-file field of each setting, and its CLI flag. */
export const SETTING_NAMES: Record<TemporalSetting, { env: string; file: string; flag?: string }> = {
  address: { env: 'TEMPORAL_ADDRESS', file: 'address', flag: '--address' },
  namespace: { env: 'TEMPORAL_NAMESPACE', file: 'namespace', flag: '--namespace' },
  apiKey: { env: 'TEMPORAL_API_KEY', file: 'api_key' },
  tls: { env: 'TEMPORAL_TLS', file: 'tls.disabled', flag: '--tls' },
  clientCert: { env: 'TEMPORAL_TLS_CLIENT_CERT_PATH', file: 'tls.client_cert_path', flag: '--tls-cert-path' },
  clientKey: { env: 'TEMPORAL_TLS_CLIENT_KEY_PATH', file: 'tls.client_key_path', flag: '--tls-key-path' },
  serverCACert: { env: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', file: 'tls.server_ca_cert_path', flag: '--tls-ca-path' },
  serverName: { env: 'TEMPORAL_TLS_SERVER_NAME', file: 'tls.server_name', flag: '--tls-server-name' },
  metadata: { env: 'TEMPORAL_GRPC_META_<NAME>', file: 'grpc_meta' },
};

/** True when TLS is on for this connection. */
export function tlsEnabled(resolved: Pick<ResolvedTemporalConnection, 'tls'>): boolean {
  return resolved.tls !== undefined && resolved.tls !== false;
}

/**
 * How a user sets `setting` where it was set: the variable, the flag, or the profile's field in
 * the file; an unset one names the variable (and the profile field).
 */
export function settingName(
  resolved: Pick<ResolvedTemporalConnection, 'sources' | 'profile' | 'configFile'>,
  setting: TemporalSetting,
): string {
  const names = SETTING_NAMES[setting];
  switch (resolved.sources[setting]) {
    case 'env':
      return names.env;
    case 'flag':
      return names.flag ?? names.env;
    case 'file':
    case 'profile':
      return `${names.file} of profile "${resolved.profile}" in ${resolved.configFile ?? 'temporal.toml'}`;
    default:
      return `${names.env} (or the profile's ${names.file})`;
  }
}

/** A connection setting that is wrong, or a server that refused it: `message` is the one line to print. */
export class TemporalConnectionError extends Error {
  constructor(
    message: string,
    readonly setting?: TemporalSetting | 'configFile' | 'profile',
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TemporalConnectionError';
    // Printed as its line alone: the frames (ours or the transport's) help nobody fix a setting.
    this.stack = `${this.name}: ${message}`;
  }
}
