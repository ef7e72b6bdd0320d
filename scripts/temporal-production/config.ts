/**
 * The production server's configuration, one file per process (`<root>/config/<process>/
 * development.yaml`, read by `temporal-server --root <root> --config config/<process> --env
 * development`): Postgres persistence (default and visibility stores), every service's loopback
 * ports, mTLS on the frontend (requireClientAuth, our CA), JWT authorization (the default
 * authorizer and claim mapper, keys from our JWKS), and the project's dynamic config. The system
 * worker reaches the cluster through `internal-frontend` (no authorizer, internode: loopback), as
 * the server's docs advise when an authorizer is on. JSON is YAML: the files are written as JSON.
 * And the client side: the cluster's TEMPORAL_* settings as a `temporal.toml` profile.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Certificates } from './certs';
import { PERMISSIONS_CLAIM } from './jwt';

export type ServiceName = 'frontend' | 'history' | 'matching' | 'worker';

export interface Ports {
  grpc: number;
  membership: number;
}

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  visibilityDatabase: string;
}

export interface ClusterLayout {
  root: string;
  shards: number;
  frontend: Ports;
  internalFrontend: Ports;
  history: Ports[];
  matching: Ports;
  worker: Ports;
  postgres: PostgresTarget;
  certs: Certificates;
  jwksUrl: string;
  logLevel: string;
  /** Postgres connections per process to the default store (visibility: a quarter, at least 1). */
  postgresConnections: number;
}

/** The project's dynamic config (scripts/temporal-dynamicconfig.yaml) plus what a machine without internet needs. */
export function writeDynamicConfig(root: string): string {
  const file = join(root, 'dynamicconfig.yaml');
  const project = readFileSync(join(__dirname, '..', 'temporal-dynamicconfig.yaml'), 'utf8');
  writeFileSync(
    file,
    `${project}\n# Added by scripts/temporal-production: no phoning home for a version check.\nfrontend.enableServerVersionCheck:\n  - value: false\n`,
  );
  return file;
}

const rpc = (p: Ports) => ({ rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnLocalHost: true } });

function store(pg: PostgresTarget, database: string, maxConns: number, applicationName: string) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${pg.host}:${pg.port}`,
      connectProtocol: 'tcp',
      user: pg.user,
      password: pg.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
      // Each process's backends are told apart in pg_stat_activity (the load bench's CPU per process).
      connectAttributes: { application_name: applicationName },
    },
  };
}

/** Writes the config of one process (`historyIndex`: which history host it is) and returns its directory relative to the root. */
export function writeProcessConfig(
  layout: ClusterLayout,
  name: string,
  historyIndex: number,
  dynamicConfigFile: string,
): string {
  const { certs } = layout;
  const config = {
    log: { stdout: true, level: layout.logLevel, format: 'json' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: layout.shards,
      datastores: {
        default: store(layout.postgres, layout.postgres.database, layout.postgresConnections, `temporal-${name}`),
        visibility: store(
          layout.postgres,
          layout.postgres.visibilityDatabase,
          Math.max(1, Math.round(layout.postgresConnections / 4)),
          `temporal-${name}-visibility`,
        ),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      tls: {
        frontend: {
          server: {
            certFile: certs.serverCert,
            keyFile: certs.serverKey,
            requireClientAuth: true,
            clientCaFiles: [certs.caCert],
          },
          client: { serverName: certs.serverName, rootCaFiles: [certs.caCert] },
        },
      },
      authorization: {
        jwtKeyProvider: { keySourceURIs: [layout.jwksUrl], refreshInterval: '1m' },
        permissionsClaimName: PERMISSIONS_CLAIM,
        authorizer: 'default',
        claimMapper: 'default',
      },
    },
    services: {
      frontend: rpc(layout.frontend),
      'internal-frontend': rpc(layout.internalFrontend),
      history: rpc(layout.history[historyIndex]!),
      matching: rpc(layout.matching),
      worker: rpc(layout.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${layout.frontend.grpc}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
  const dir = join('config', name);
  mkdirSync(join(layout.root, dir), { recursive: true });
  writeFileSync(join(layout.root, dir, 'development.yaml'), JSON.stringify(config, null, 2));
  return dir;
}

/** The cluster's TEMPORAL_* settings as a `temporal.toml` profile (envconfig's and the `temporal` CLI's format). */
export function temporalTomlProfile(env: Record<string, string>, profile: string): string {
  const q = (v: string | undefined) => JSON.stringify(v ?? '');
  return [
    `[profile.${profile}]`,
    `address = ${q(env.TEMPORAL_ADDRESS)}`,
    `namespace = ${q(env.TEMPORAL_NAMESPACE)}`,
    `api_key = ${q(env.TEMPORAL_API_KEY)}`,
    '',
    `[profile.${profile}.tls]`,
    `client_cert_path = ${q(env.TEMPORAL_TLS_CLIENT_CERT_PATH)}`,
    `client_key_path = ${q(env.TEMPORAL_TLS_CLIENT_KEY_PATH)}`,
    `server_ca_cert_path = ${q(env.TEMPORAL_TLS_SERVER_CA_CERT_PATH)}`,
    `server_name = ${q(env.TEMPORAL_TLS_SERVER_NAME)}`,
    '',
  ].join('\n');
}
