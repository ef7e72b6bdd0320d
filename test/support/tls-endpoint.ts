/**
 * A real TLS endpoint in front of a real Temporal server, for the connection tests: certificates
 * made with `openssl` (a CA, a server certificate for 127.0.0.1/localhost, a client certificate the
 * CA signed, and a foreign CA with a client certificate of its own), and a loopback TLS listener
 * (optionally requiring a client certificate from the CA: mTLS) that pipes each accepted
 * connection's decrypted bytes to the server's plaintext gRPC port. The handshake, the refusals
 * and the certificates are the real thing; only the server's own TLS is replaced by the listener.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';

export interface TestCertificates {
  dir: string;
  /** The CA that signed the server and the client certificate. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA the endpoint does not know, and a client certificate it signed. */
  otherCa: string;
  foreignClientCert: string;
  foreignClientKey: string;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-tls-'));
  for (const ca of ['ca', 'otherca'])
    openssl(
      ['req', '-x509', ...EC, '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=${ca}`],
      dir,
    );
  // X.509 v3 (extensions) throughout: the worker's TLS (rustls) refuses v1 certificates.
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  const sign = (name: string, ca: string, ext?: string) => {
    openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
    openssl(
      ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial']
        .concat(['-out', `${name}.pem`, '-days', '2'])
        .concat(ext ? ['-extfile', ext] : []),
      dir,
    );
  };
  sign('server', 'ca', 'server.ext');
  sign('client', 'ca', 'client.ext');
  sign('foreign', 'otherca', 'client.ext');
  const p = (f: string) => join(dir, f);
  return {
    dir,
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    otherCa: p('otherca.pem'),
    foreignClientCert: p('foreign.pem'),
    foreignClientKey: p('foreign.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsEndpoint {
  address: string;
  close(): Promise<void>;
}

/** A loopback TLS listener forwarding to `target` (host:port); `mtls`: client certificates from the CA required. */
export async function startTlsEndpoint(
  certs: TestCertificates,
  target: string,
  opts: { mtls?: boolean } = {},
): Promise<TlsEndpoint> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<TLSSocket>();
  const server = createServer(
    {
      cert: readFileSync(certs.serverCert),
      key: readFileSync(certs.serverKey),
      ALPNProtocols: ['h2'],
      ...(opts.mtls ? { requestCert: true, rejectUnauthorized: true, ca: readFileSync(certs.ca) } : {}),
    },
    (socket) => {
      sockets.add(socket);
      const upstream = netConnect({ host, port });
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
        sockets.delete(socket);
      };
      socket.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    },
  );
  server.on('tlsClientError', () => undefined); // a refused handshake is what the tests provoke
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: listening } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${listening}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
