/**
 * One way to connect (client/temporal/connection.ts): Temporal's envconfig rules, with the source
 * of every setting — config file's default profile < a named profile < variables < flags — and a
 * clear error naming the setting for each bad one. Real temp temporal.toml files, no server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTemporalConnection, settingName, TemporalConnectionError } from '../../../client/temporal/connection';

const dir = mkdtempSync(join(tmpdir(), 'dreact-envconfig-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function toml(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
}

const certFile = toml('client.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const keyFile = toml('client.key', '-----BEGIN PRIVATE KEY-----\nsecret-key-bytes\n-----END PRIVATE KEY-----\n');
const caFile = toml('ca.pem', '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');

const config = toml(
  'temporal.toml',
  `[profile.default]
address = "file-host:7233"
namespace = "file-ns"

[profile.staging]
address = "staging-host:7233"
namespace = "staging-ns"
api_key = "staging-key"

[profile.staging.tls]
server_name = "staging.example"
server_ca_cert_path = "${caFile}"

[profile.mtls]
address = "mtls-host:7233"
namespace = "mtls-ns"

[profile.mtls.tls]
client_cert_path = "${certFile}"
client_key_path = "${keyFile}"

[profile.mtls.grpc_meta]
x-tenant = "acme"
`,
);

test('nothing set: our defaults, sources "default", no TLS, no key', () => {
  const r = resolveTemporalConnection({ env: {} });
  assert.equal(r.address, '127.0.0.1:7233');
  assert.equal(r.namespace, 'default');
  assert.deepEqual(r.sources, { address: 'default', namespace: 'default' });
  assert.equal(r.tls, undefined);
  assert.equal(r.apiKey, undefined);
  assert.equal(r.configFile, undefined);
  assert.equal(r.profile, 'default');
  const d = resolveTemporalConnection({ env: {}, defaults: { address: 'x:1', namespace: 'n' } });
  assert.equal(d.address, 'x:1');
  assert.equal(d.namespace, 'n');
});

test('the default location: $XDG_CONFIG_HOME/temporalio/temporal.toml, else ~/.config/…', () => {
  const home = mkdtempSync(join(dir, 'home-'));
  const { mkdirSync } = require('node:fs') as typeof import('node:fs');
  mkdirSync(join(home, '.config', 'temporalio'), { recursive: true });
  writeFileSync(
    join(home, '.config', 'temporalio', 'temporal.toml'),
    '[profile.default]\naddress = "home-host:7233"\n',
  );
  const r = resolveTemporalConnection({ env: { HOME: home } });
  assert.equal(r.address, 'home-host:7233');
  assert.equal(r.sources.address, 'file');
  assert.equal(r.configFile, join(home, '.config', 'temporalio', 'temporal.toml'));
  assert.equal(r.configFileFrom, 'default');
});

test('precedence: file (default profile) < named profile < env < flag, each source named', () => {
  // The file's default profile.
  const file = resolveTemporalConnection({ env: { TEMPORAL_CONFIG_FILE: config } });
  assert.equal(file.address, 'file-host:7233');
  assert.equal(file.namespace, 'file-ns');
  assert.deepEqual(file.sources, { address: 'file', namespace: 'file' });
  assert.equal(file.configFile, config);
  assert.equal(file.configFileFrom, 'env');

  // A named profile replaces the default one (TEMPORAL_PROFILE), with its TLS and API key.
  const profile = resolveTemporalConnection({ env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'staging' } });
  assert.equal(profile.address, 'staging-host:7233');
  assert.equal(profile.namespace, 'staging-ns');
  assert.equal(profile.apiKey, 'staging-key');
  assert.equal(profile.profile, 'staging');
  assert.equal(profile.profileFrom, 'env');
  assert.deepEqual(profile.sources, {
    address: 'profile',
    namespace: 'profile',
    apiKey: 'profile',
    serverCACert: 'profile',
    serverName: 'profile',
  });
  assert.ok(typeof profile.tls === 'object');
  assert.equal((profile.tls as { serverNameOverride?: string }).serverNameOverride, 'staging.example');
  assert.equal(profile.tlsFiles.serverCACert, caFile);

  // Variables win over the profile, setting by setting.
  const env = resolveTemporalConnection({
    env: {
      TEMPORAL_CONFIG_FILE: config,
      TEMPORAL_PROFILE: 'staging',
      TEMPORAL_NAMESPACE: 'env-ns',
      TEMPORAL_API_KEY: 'env-key',
    },
  });
  assert.equal(env.address, 'staging-host:7233');
  assert.equal(env.namespace, 'env-ns');
  assert.equal(env.apiKey, 'env-key');
  assert.equal(env.sources.address, 'profile');
  assert.equal(env.sources.namespace, 'env');
  assert.equal(env.sources.apiKey, 'env');

  // Flags win over variables; --profile over TEMPORAL_PROFILE, --config-file over TEMPORAL_CONFIG_FILE.
  const other = toml('other.toml', '[profile.prod]\naddress = "prod-host:7233"\nnamespace = "prod-ns"\n');
  const flag = resolveTemporalConnection({
    env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'staging', TEMPORAL_NAMESPACE: 'env-ns' },
    configFile: other,
    profile: 'prod',
    flags: { namespace: 'flag-ns' },
  });
  assert.equal(flag.configFile, other);
  assert.equal(flag.configFileFrom, 'flag');
  assert.equal(flag.profile, 'prod');
  assert.equal(flag.profileFrom, 'flag');
  assert.equal(flag.address, 'prod-host:7233');
  assert.equal(flag.sources.address, 'profile');
  assert.equal(flag.namespace, 'flag-ns');
  assert.equal(flag.sources.namespace, 'flag');
  const addr = resolveTemporalConnection({
    env: { TEMPORAL_ADDRESS: 'env-host:7233' },
    flags: { address: 'flag-host:7233' },
  });
  assert.equal(addr.address, 'flag-host:7233');
  assert.equal(addr.sources.address, 'flag');
});

test('mTLS from the profile: certificate pair read, gRPC metadata; variables and flags override TLS fields', () => {
  const r = resolveTemporalConnection({ env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'mtls' } });
  const tls = r.tls as { clientCertPair?: { crt: Uint8Array; key: Uint8Array } };
  assert.match(Buffer.from(tls.clientCertPair!.crt).toString(), /BEGIN CERTIFICATE/);
  assert.equal(r.tlsFiles.clientCert, certFile);
  assert.equal(r.tlsFiles.clientKey, keyFile);
  assert.deepEqual(r.metadata, { 'x-tenant': 'acme' });
  assert.equal(r.sources.metadata, 'profile');
  assert.equal(r.sources.clientCert, 'profile');

  const env = resolveTemporalConnection({
    env: {
      TEMPORAL_CONFIG_FILE: config,
      TEMPORAL_PROFILE: 'mtls',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: caFile,
      TEMPORAL_GRPC_META_X_TENANT: 'globex',
    },
    flags: { tlsServerName: 'flag.example' },
  });
  assert.equal(env.sources.serverCACert, 'env');
  assert.equal(env.sources.serverName, 'flag');
  assert.equal(env.sources.clientCert, 'profile');
  assert.deepEqual(env.metadata, { 'x-tenant': 'globex' });
  assert.equal((env.tls as { serverNameOverride?: string }).serverNameOverride, 'flag.example');

  // TEMPORAL_TLS=false turns the profile's TLS off; --tls turns it back on.
  const off = resolveTemporalConnection({
    env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'mtls', TEMPORAL_TLS: 'false' },
  });
  assert.equal(off.tls, false);
  assert.equal(off.sources.tls, 'env');
  const on = resolveTemporalConnection({
    env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'mtls', TEMPORAL_TLS: 'false' },
    flags: { tls: true },
  });
  assert.ok(on.tls && typeof on.tls === 'object');
  assert.equal(on.sources.tls, 'flag');
});

test('an API key alone turns TLS on (Temporal Cloud); TEMPORAL_TLS=true alone is TLS with the system CAs', () => {
  const key = resolveTemporalConnection({
    env: { TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k' },
  });
  assert.equal(key.tls, true);
  assert.equal(key.apiKey, 'k');
  const tls = resolveTemporalConnection({ env: { TEMPORAL_TLS: 'true' } });
  assert.deepEqual(tls.tls, {
    serverNameOverride: undefined,
    serverRootCACertificate: undefined,
    clientCertPair: undefined,
  });
});

test('setting names: the variable, the flag or the profile field the user set', () => {
  const r = resolveTemporalConnection({
    env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'staging', TEMPORAL_NAMESPACE: 'n' },
    flags: { address: 'a:1' },
  });
  assert.equal(settingName(r, 'namespace'), 'TEMPORAL_NAMESPACE');
  assert.equal(settingName(r, 'address'), '--address');
  assert.equal(settingName(r, 'apiKey'), `api_key of profile "staging" in ${config}`);
  assert.equal(settingName(r, 'clientCert'), "TEMPORAL_TLS_CLIENT_CERT_PATH (or the profile's tls.client_cert_path)");
});

const refuses = (opts: Parameters<typeof resolveTemporalConnection>[0], re: RegExp) =>
  assert.throws(
    () => resolveTemporalConnection(opts),
    (err: unknown) => err instanceof TemporalConnectionError && re.test(err.message) && !err.message.includes('\n'),
  );

test('bad settings: one line naming the setting', () => {
  refuses(
    { env: { TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') } },
    /^TEMPORAL_CONFIG_FILE=.*missing\.toml: no such file$/,
  );
  refuses({ env: {}, configFile: join(dir, 'missing.toml') }, /^--config-file=.*: no such file$/);
  refuses(
    { env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_PROFILE: 'nope' } },
    /^TEMPORAL_PROFILE=nope: no profile "nope" in .*temporal\.toml$/,
  );
  refuses({ env: {}, profile: 'prod' }, /^--profile=prod: no temporal\.toml to read it from/);
  refuses(
    { env: { TEMPORAL_TLS_CLIENT_CERT_PATH: certFile } },
    /^TEMPORAL_TLS_CLIENT_CERT_PATH is set but TEMPORAL_TLS_CLIENT_KEY_PATH .* is not: mTLS needs/,
  );
  refuses(
    { env: { TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'no-ca.pem') } },
    /^TEMPORAL_TLS_SERVER_CA_CERT_PATH=.*no-ca\.pem: cannot read it \(ENOENT\)$/,
  );
  refuses(
    { env: { TEMPORAL_ADDRESS: 'http://host:7233' } },
    /^TEMPORAL_ADDRESS="http:\/\/host:7233": expected host:port/,
  );
  refuses({ env: { TEMPORAL_ADDRESS: 'host' } }, /^TEMPORAL_ADDRESS="host": expected host:port/);
  refuses({ env: { TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' } }, /cannot turn host verification off/);
  const broken = toml('broken.toml', '[profile.default\naddress = 1');
  refuses({ env: { TEMPORAL_CONFIG_FILE: broken } }, /broken\.toml: /);
  // An IPv6 address with its port is fine.
  assert.equal(resolveTemporalConnection({ env: { TEMPORAL_ADDRESS: '[::1]:7233' } }).address, '[::1]:7233');
});
