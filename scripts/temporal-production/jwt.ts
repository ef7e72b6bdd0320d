/**
 * The production server's JWT keys: an RSA key pair, its public half served as a JWKS on
 * loopback (the server's `jwtKeyProvider.keySourceURIs`), and tokens signed with it (RS256, `kid`
 * in the header as the server's default claim mapper requires; permissions in the `permissions`
 * claim, e.g. `dreact:write`, `temporal-system:admin`). A token is what the SDK sends as an API key:
 * `authorization: Bearer <token>` — the path Temporal Cloud API keys take.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';

export const PERMISSIONS_CLAIM = 'permissions';

export interface TokenSigner {
  kid: string;
  jwks: { keys: Array<Record<string, unknown>> };
  /** A token for `subject` with these permissions, valid for `ttlSeconds` (negative: already expired). */
  token(subject: string, permissions: string[], ttlSeconds?: number): string;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Loads the key in `keyFile`, or makes one there (a restarted server keeps its clients' tokens valid). */
export function tokenSigner(keyFile: string): TokenSigner {
  let privateKey: KeyObject;
  if (existsSync(keyFile)) privateKey = createPrivateKey(readFileSync(keyFile));
  else {
    privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  const publicJwk = privateKey.export({ format: 'jwk' });
  const kid = b64url(Buffer.from(String(publicJwk.n)).subarray(0, 12));
  const jwks = { keys: [{ kty: 'RSA', n: publicJwk.n, e: publicJwk.e, kid, alg: 'RS256', use: 'sig' }] };
  return {
    kid,
    jwks,
    token(subject, permissions, ttlSeconds = 7 * 24 * 3600) {
      const now = Math.floor(Date.now() / 1000);
      const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
      const payload = b64url(
        JSON.stringify({
          sub: subject,
          iat: now,
          exp: now + ttlSeconds,
          jti: randomBytes(8).toString('hex'),
          [PERMISSIONS_CLAIM]: permissions,
        }),
      );
      const signature = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
      return `${header}.${payload}.${b64url(signature)}`;
    },
  };
}

export interface JwksServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the key set at http://127.0.0.1:<port>/jwks.json (port 0: any free one). */
export async function serveJwks(jwks: TokenSigner['jwks'], port = 0): Promise<JwksServer> {
  const body = JSON.stringify(jwks);
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/jwks.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
