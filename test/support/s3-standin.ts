/**
 * S3 stand-in on loopback: path-style GET / PUT / HEAD / DELETE of objects with signature-checked
 * SigV4 (Authorization header from the SDK, or presigned query URLs), expiry, and CRC32 checksum
 * checks like S3. Objects live in memory. `s3rver` was tried first: it accepts any signature
 * (tampered or from unknown keys), so it cannot show that a presigned URL grants exactly one object.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { readBody, verifySigv4, type Sigv4Credentials } from './sigv4-verify';

export interface S3StandinOptions {
  buckets: string[];
  credentials: Sigv4Credentials[];
  maxObjectBytes?: number;
}

export interface S3Request {
  method: string;
  bucket: string;
  key: string;
  mode?: 'header' | 'query';
  status: number;
}

export interface S3Standin {
  endpoint: string;
  /** Every request with its outcome, in order. */
  requests: S3Request[];
  object(bucket: string, key: string): Buffer | undefined;
  keys(bucket: string, prefix?: string): string[];
  close(): Promise<void>;
}

const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

function sendError(res: ServerResponse, status: number, code: string, message: string, head = false) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(
    head
      ? undefined
      : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error>`,
  );
}

function crc32Base64(body: Buffer): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32(body) >>> 0);
  return b.toString('base64');
}

export async function startS3Standin(opts: S3StandinOptions): Promise<S3Standin> {
  const maxBytes = opts.maxObjectBytes ?? 64 * 1024 * 1024;
  const store = new Map<string, Map<string, { body: Buffer; contentType: string; etag: string }>>(
    opts.buckets.map((b) => [b, new Map()]),
  );
  const requests: S3Request[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2);
    const segments = rawPath.split('/').slice(1);
    const bucket = decodeURIComponent(segments[0] ?? '');
    const key = segments.slice(1).map(decodeURIComponent).join('/');
    const entry: S3Request = { method: req.method ?? '', bucket, key, status: 0 };
    requests.push(entry);
    const fail = (status: number, code: string, message: string) => {
      entry.status = status;
      sendError(res, status, code, message, req.method === 'HEAD');
    };
    let body: Buffer;
    try {
      body = await readBody(req, maxBytes);
    } catch (err) {
      return fail(400, 'EntityTooLarge', (err as Error).message);
    }
    const auth = verifySigv4(req, body, opts.credentials);
    entry.mode = auth.mode;
    if (!auth.ok) return fail(403, auth.code ?? 'AccessDenied', auth.message ?? 'access denied');
    const objects = store.get(bucket);
    if (!objects) return fail(404, 'NoSuchBucket', `The specified bucket does not exist: ${bucket}`);
    if (!key) return fail(501, 'NotImplemented', 'the stand-in serves object operations only');
    const query = new URLSearchParams(rawQuery);
    if (req.method === 'PUT') {
      const declared = req.headers['x-amz-checksum-crc32'] ?? query.get('x-amz-checksum-crc32') ?? undefined;
      if (declared !== undefined && declared !== crc32Base64(body))
        return fail(400, 'BadDigest', 'The CRC32 you specified did not match the calculated checksum.');
      if (String(req.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-'))
        return fail(501, 'NotImplemented', 'aws-chunked uploads are not supported by the stand-in');
      const etag = `"${createHash('md5').update(body).digest('hex')}"`;
      objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'application/octet-stream'), etag });
      entry.status = 200;
      res.writeHead(200, { etag });
      return res.end();
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const obj = objects.get(key);
      if (!obj) return fail(404, 'NoSuchKey', `The specified key does not exist: ${key}`);
      const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
      if (range && (range[1] || range[2])) {
        const size = obj.body.length;
        // bytes=a-b, bytes=a- or the suffix form bytes=-n (the last n bytes).
        const start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
        const end = range[1] && range[2] ? Math.min(size - 1, Number(range[2])) : size - 1;
        // As S3: a range on an empty object, or starting past its end, is not satisfiable.
        if (start >= size) return fail(416, 'InvalidRange', 'The requested range is not satisfiable');
        const part = obj.body.subarray(start, end + 1);
        entry.status = 206;
        res.writeHead(206, {
          'content-type': obj.contentType,
          'content-length': part.length,
          'content-range': `bytes ${start}-${start + part.length - 1}/${size}`,
          etag: obj.etag,
        });
        return res.end(req.method === 'GET' ? part : undefined);
      }
      entry.status = 200;
      res.writeHead(200, { 'content-type': obj.contentType, 'content-length': obj.body.length, etag: obj.etag });
      return res.end(req.method === 'GET' ? obj.body : undefined);
    }
    if (req.method === 'DELETE') {
      objects.delete(key);
      entry.status = 204;
      res.writeHead(204);
      return res.end();
    }
    return fail(405, 'MethodNotAllowed', `${req.method} is not supported`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, 'InternalError', err.message);
      else res.destroy(err);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    object: (bucket, key) => store.get(bucket)?.get(key)?.body,
    keys: (bucket, prefix = '') => [...(store.get(bucket)?.keys() ?? [])].filter((k) => k.startsWith(prefix)).sort(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
