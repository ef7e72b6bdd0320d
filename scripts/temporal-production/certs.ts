/**
 * The production server's certificates, made with `openssl`: a CA, the frontend's server
 * certificate (localhost and 127.0.0.1), a client certificate for workers and clients, and — for
 * the refusal a wrong certificate must meet — a second CA with a client certificate of its own
 * that the server does not trust. EC P-256 keys in PKCS#8 (what rustls, Node and Go all read).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Certificates {
  dir: string;
  /** The CA that signed the server and client certificates (the client's TEMPORAL_TLS_SERVER_CA_CERT_PATH). */
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** The name the server certificate carries (TEMPORAL_TLS_SERVER_NAME). */
  serverName: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from a CA the server does not trust. */
  rogueClientCert: string;
  rogueClientKey: string;
}

export const SERVER_NAME = 'localhost';

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || (err as Error).message}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string, cn: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    ...EC,
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '30',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { cert, key };
}

function makeLeaf(
  dir: string,
  name: string,
  ca: { cert: string; key: string },
  cn: string,
  extensions: string[],
): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', ...extensions, ''].join('\n'));
  openssl(['req', ...EC, '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '30',
    '-extfile',
    ext,
  ]);
  return { cert, key };
}

/** Makes the certificates in `dir` (kept when they are there already: a restarted server keeps its clients' certificates valid). */
export function makeCertificates(dir: string): Certificates {
  mkdirSync(dir, { recursive: true });
  const paths: Certificates = {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    serverName: SERVER_NAME,
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    rogueClientCert: join(dir, 'rogue-client.pem'),
    rogueClientKey: join(dir, 'rogue-client.key'),
  };
  if (existsSync(paths.rogueClientKey)) return paths;
  const ca = makeCa(dir, 'ca', 'durable-react test CA');
  makeLeaf(dir, 'server', ca, SERVER_NAME, [
    'extendedKeyUsage=serverAuth',
    `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1`,
  ]);
  makeLeaf(dir, 'client', ca, 'dreact-worker', ['extendedKeyUsage=clientAuth']);
  const rogue = makeCa(dir, 'rogue-ca', 'an untrusted CA');
  makeLeaf(dir, 'rogue-client', rogue, 'dreact-worker', ['extendedKeyUsage=clientAuth']);
  return paths;
}
