/**
 * AWS Signature Version 4 verification for the loopback stand-ins (header and presigned-query
 * forms), written from the published algorithm so the tests check the SDKs' signatures
 * independently of the SDKs' own signer.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface Sigv4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Sigv4Result {
  ok: boolean;
  code?: 'AccessDenied' | 'SignatureDoesNotMatch' | 'InvalidAccessKeyId' | 'MissingAuthentication' | 'ExpiredRequest';
  message?: string;
  mode?: 'header' | 'query';
  accessKeyId?: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 encoding as SigV4 wants it. */
const enc = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function parseQuery(raw: string): Array<[string, string]> {
  if (!raw) return [];
  return raw.split('&').map((pair) => {
    const i = pair.indexOf('=');
    const k = i < 0 ? pair : pair.slice(0, i);
    const v = i < 0 ? '' : pair.slice(i + 1);
    return [decodeURIComponent(k), decodeURIComponent(v)];
  });
}

function amzDateMs(d: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(d);
  if (!m) return NaN;
  const [, y, mo, d2, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d2!, h!, mi!, s!);
}

/**
 * Verifies the request's signature. `body` is the full payload (the header form signs its hash).
 * `nowMs` checks presigned expiry and the 15-minute clock skew of the header form.
 */
export function verifySigv4(
  req: IncomingMessage,
  body: Buffer,
  creds: Sigv4Credentials[],
  nowMs = Date.now(),
): Sigv4Result {
  const [path, rawQuery = ''] = (req.url ?? '/').split('?', 2);
  const query = parseQuery(rawQuery);
  const q = new Map(query);
  const auth = req.headers.authorization;
  let mode: 'header' | 'query';
  let credential: string, signedHeaders: string, signature: string, amzDate: string, payloadHash: string;
  if (q.has('X-Amz-Signature')) {
    mode = 'query';
    credential = q.get('X-Amz-Credential') ?? '';
    signedHeaders = q.get('X-Amz-SignedHeaders') ?? '';
    signature = q.get('X-Amz-Signature') ?? '';
    amzDate = q.get('X-Amz-Date') ?? '';
    payloadHash = q.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
    const expires = Number(q.get('X-Amz-Expires'));
    const signedAt = amzDateMs(amzDate);
    if (!Number.isFinite(expires) || !Number.isFinite(signedAt))
      return { ok: false, code: 'AccessDenied', message: 'malformed presigned URL', mode };
    if (nowMs > signedAt + expires * 1000)
      return { ok: false, code: 'AccessDenied', message: 'Request has expired', mode };
  } else if (auth?.startsWith('AWS4-HMAC-SHA256 ')) {
    mode = 'header';
    const fields = new Map(
      auth
        .slice('AWS4-HMAC-SHA256 '.length)
        .split(',')
        .map((f) => f.trim().split('=', 2) as [string, string]),
    );
    credential = fields.get('Credential') ?? '';
    signedHeaders = fields.get('SignedHeaders') ?? '';
    signature = fields.get('Signature') ?? '';
    amzDate = String(req.headers['x-amz-date'] ?? '');
    const declared = req.headers['x-amz-content-sha256'];
    payloadHash = typeof declared === 'string' ? declared : sha256(body);
    if (/^[0-9a-f]{64}$/.test(payloadHash) && payloadHash !== sha256(body))
      return { ok: false, code: 'SignatureDoesNotMatch', message: 'payload hash does not match the body', mode };
    if (Math.abs(nowMs - amzDateMs(amzDate)) > 15 * 60_000)
      return { ok: false, code: 'ExpiredRequest', message: 'request time too skewed', mode };
  } else {
    return { ok: false, code: 'MissingAuthentication', message: 'no SigV4 signature on the request' };
  }
  const [accessKeyId = '', date = '', region = '', service = '', terminator = ''] = credential.split('/');
  const secret = creds.find((c) => c.accessKeyId === accessKeyId)?.secretAccessKey;
  if (!secret) return { ok: false, code: 'InvalidAccessKeyId', message: `unknown access key ${accessKeyId}`, mode };
  const canonicalQuery = query
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [enc(k), enc(v)])
    .sort(([a = '', x = ''], [b = '', y = '']) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders.split(';');
  const canonicalHeaders = names
    .map((n) => {
      const v = req.headers[n];
      const value = Array.isArray(v) ? v.join(',') : (v ?? '');
      return `${n}:${value.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonicalRequest = [req.method, path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/${terminator}`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = Buffer.from(createHmac('sha256', key).update(stringToSign).digest('hex'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return {
      ok: false,
      code: 'SignatureDoesNotMatch',
      message: 'the request signature does not match',
      mode,
      accessKeyId,
    };
  return { ok: true, mode, accessKeyId };
}

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error(`request body over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
