/**
 * One HTTP(S) GET to a checked target (`address-guard.ts`), connected only to the addresses the
 * guard checked: node:http(s) with a pinned `lookup`, the URL's name kept as Host header and TLS
 * SNI (certificates are verified against it), no connection reuse (`agent: false`), no redirect
 * following (the caller re-checks every hop). The answer is a WHATWG `Response` whose body is
 * decompressed (gzip, deflate, br) as fetch would; aborting `signal` fails the request or the body.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable, pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { pinnedLookup, type GuardedTarget } from './address-guard';

export interface PinnedGetOptions {
  signal: AbortSignal;
  headers: Record<string, string>;
  /** A POST with this body instead of a GET (a schedule's signed webhook, activities/schedules/deliver.ts). */
  post?: Buffer;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

function decoder(encoding: string): NodeJS.ReadWriteStream | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return undefined;
}

function headersOf(res: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
    } catch {
      // A header value fetch would reject too (e.g. control characters): dropped, as undici does.
    }
  }
  return headers;
}

/** GETs the target's URL over a connection to its checked addresses. */
export function pinnedGet(target: GuardedTarget, opts: PinnedGetOptions): Promise<Response> {
  const { url } = target;
  const secure = url.protocol === 'https:';
  const request = secure ? https.request : http.request;
  return new Promise<Response>((resolve, reject) => {
    const req = request({
      protocol: url.protocol,
      host: target.host,
      port: target.port,
      path: `${url.pathname}${url.search}`,
      method: opts.post ? 'POST' : 'GET',
      headers: { 'accept-encoding': 'gzip, deflate, br', ...opts.headers },
      agent: false,
      signal: opts.signal,
      ...(target.literal ? {} : { lookup: pinnedLookup(target.addresses) }),
      ...(secure && !target.literal ? { servername: target.host.replace(/\.$/, '') } : {}),
    });
    req.on('error', reject); // after the answer, errors reach the body stream; reject is then a no-op
    req.once('response', (res) => {
      res.on('error', () => undefined); // surfaced through the body stream; never an unhandled 'error'
      const status = res.statusCode ?? 0;
      const headers = headersOf(res);
      let body: Readable = res;
      const dec = decoder((headers.get('content-encoding') ?? '').trim().toLowerCase());
      if (dec && !NULL_BODY.has(status)) {
        body = pipeline(res, dec, () => undefined) as unknown as Readable;
        headers.delete('content-encoding');
        headers.delete('content-length');
      }
      // A body aborted mid-read must fail, not end early (a truncated page would look complete).
      const onAbort = (): void => {
        body.destroy(opts.signal.reason instanceof Error ? opts.signal.reason : new Error('aborted'));
      };
      opts.signal.addEventListener('abort', onAbort, { once: true });
      body.once('close', () => opts.signal.removeEventListener('abort', onAbort));
      try {
        if (NULL_BODY.has(status)) res.resume();
        const stream = NULL_BODY.has(status) ? null : (Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>);
        let statusText = res.statusMessage ?? '';
        if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText)) statusText = '';
        resolve(new Response(stream, { status, statusText, headers }));
      } catch (err) {
        res.destroy();
        reject(new Error(`bad HTTP response (status ${status}): ${(err as Error).message}`, { cause: err }));
      }
    });
    req.end(opts.post);
  });
}
