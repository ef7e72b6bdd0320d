/**
 * Hosted files (store/file-store.ts): `GET /v1/conversations/:id/files` lists what a user may
 * download — exec outputs marked external, react.write files of kind `file`, the user's
 * attachments — and `GET /v1/conversations/:id/files/<path>` serves one (by its key or the model's
 * `fi:` name for it), with an API key or, for
 * browsers (an <img> or a link cannot send headers), a short-lived signed URL: `?token=` signed by
 * the gateway's token signer (stream-token.ts, purpose `file`) over tenant, project, user, key,
 * conversation, path and expiry; checked on every request, with the issuing key's revocation.
 *
 * Responses: `Content-Type` from the stored MIME, `Content-Disposition` with a safe name (RFC 6266,
 * `filename*`), strong `ETag` (the content's SHA-256) with `If-None-Match` → 304, single byte
 * ranges (206, 416, `If-Range`), `nosniff`. Only images, PDF and plain text-like types are served
 * inline; everything else (HTML, SVG, scripts, archives…) is an attachment under
 * `Content-Security-Policy: sandbox`, so a file never runs script on the gateway's (the chat's)
 * origin. Bytes stream in chunks from Postgres; nothing buffers a whole large file.
 */
import type { Context, Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/errors';
import { assertSafeRelPath } from '../../core/timeline/paths';
import { scopeConversationId } from '../../core/tenancy/conversation-space';
import type { Principal } from '../../core/tenancy/principal';
import { turnIdFor } from '../../core/turn/ids';
import { denotedFileKey, nearFiles } from '../../core/workspace/file-ref';
import { hostedFile, listHostedFiles, readBlobRange, type HostedFile } from '../../store/file-store';
import type { TokenSigner } from './stream-token';
import {
  clientIdParam,
  conversationId,
  Forbidden,
  need,
  ownedConversation,
  shownId,
  wholeNumber,
  zodMessage,
  type GatewayEnv,
} from './http';

/** How long a signed file URL holds. */
export const FILE_LINK_TTL_MS = 10 * 60_000;
/** Bytes per read from Postgres while streaming a download. */
export const FILE_CHUNK_BYTES = 1024 * 1024;
/** Types served inline (shown by the browser, never run): everything else is an attachment in a sandbox. */
export const INLINE_SAFE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'application/pdf',
  'text/plain',
  'text/csv',
  'text/markdown',
  'application/json',
]);

/** A file as the API lists it: its download URL and, when asked, a signed one for browsers. */
export interface FileEntry extends HostedFile {
  url: string;
  signedUrl?: string;
}

const ListQuerySchema = z.strictObject({
  turn: wholeNumber(1).optional(),
  signed: z.enum(['0', '1', 'true', 'false']).optional(),
});
const DownloadQuerySchema = z.strictObject({
  token: z.string().max(4096).optional(),
  download: z.enum(['0', '1', 'true', 'false']).optional(),
});

const LinkPayloadSchema = z.strictObject({
  c: z.string(),
  f: z.string(),
  t: z.string(),
  p: z.string(),
  u: z.string().nullable(),
  k: z.string(),
  exp: z.number().int(),
});

/** The URL path of a file: each segment of its key percent-encoded. */
export function fileUrl(shownConversationId: string, path: string): string {
  return `/v1/conversations/${encodeURIComponent(shownConversationId)}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The file key of a request path's tail (after `/files/`): segments percent-decoded once, a logical
 * path (`fi:<turn>.files/<rel>`, the model's name for the file) turned into its key, then
 * checked as a workspace path (no `.` / `..` — also encoded —, no absolute or drive paths, no
 * backslashes, NUL or control characters, no empty segments). A 400 names the rule.
 */
export function fileKeyOf(rawTail: string): string {
  let decoded: string;
  try {
    decoded = rawTail
      .split('/')
      .map((s) => decodeURIComponent(s))
      .join('/');
  } catch {
    throw new DreactError('file path: malformed percent-encoding', 'bad_input');
  }
  if (/^(?:conv:)?fi:/.test(decoded)) {
    const denoted = denotedFileKey(decoded, undefined);
    if ('error' in denoted) throw new DreactError(denoted.error, 'bad_input');
    decoded = denoted.key;
  }
  try {
    assertSafeRelPath(decoded, 'file path');
  } catch (err) {
    throw new DreactError((err as Error).message, 'bad_input');
  }
  if (!/^[A-Za-z0-9_-]+\/(files|outputs|attachments)\/./.test(decoded))
    throw new DreactError(
      `file path "${decoded}": expected <turn id>/outputs|files|attachments/<name>, fi:<turn>.files|outputs/<rel> or fi:<turn>.user.attachments/<name>`,
      'bad_input',
    );
  return decoded;
}

/**
 * The request's path as the client sent it. URL parsing resolves dot segments — `%2e%2e` too —
 * before routing, so the routed path of `…/outputs/%2e%2e/outputs/x` is `…/outputs/x`; the file key
 * is decided on the path as sent (decoded by fileKeyOf), where that `..` is a 400.
 */
function requestTarget(c: Context): string {
  const raw = (c.env as { incoming?: { url?: string } } | undefined)?.incoming?.url;
  return (raw ?? new URL(c.req.url).pathname).split('?')[0]!;
}

/** `Content-Disposition` with an ASCII fallback name and the exact name as `filename*` (RFC 6266 / 8187). */
export function contentDisposition(kind: 'inline' | 'attachment', rawName: string): string {
  // A lone surrogate cannot be percent-encoded: it becomes U+FFFD.
  const name = rawName.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  const ascii = name.replace(/[^A-Za-z0-9._ -]/g, '_').replace(/^[ .]+/, '') || 'download';
  const exact = encodeURIComponent(name).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/** One `bytes=` range of a `size`-byte file: the span, 'unsatisfiable', or undefined (ignore: serve it whole). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined; // several ranges or another unit: the whole file
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

const etagOf = (f: HostedFile) => `"${f.sha256}"`;

function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** The file's bytes `[start, end]` as a stream of chunks read from Postgres as the client takes them. */
function blobStream(pool: Pool, conversationId: string, f: HostedFile, start: number, end: number): ReadableStream {
  let at = start;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at > end) return controller.close();
      const chunk = await readBlobRange(pool, conversationId, f.sha256, at, Math.min(FILE_CHUNK_BYTES, end - at + 1));
      if (chunk.length === 0) return controller.error(new Error(`file ${f.path} is gone (purged while downloading)`));
      at += chunk.length;
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      if (at > end) controller.close();
    },
  });
}

export interface FileRouteOptions {
  signer: TokenSigner;
  /** Whether the key that signed a URL still holds (revoked: the URL stops working). */
  keyStillActive: (keyId: string) => Promise<boolean> | boolean;
  ttlMs?: number;
}

export function registerFileRoutes(app: Hono<GatewayEnv>, pool: Pool, opts: FileRouteOptions): void {
  const ttlMs = opts.ttlMs ?? FILE_LINK_TTL_MS;
  const sign = (p: Principal, id: string, path: string, exp: number) =>
    opts.signer.seal({ c: id, f: path, t: p.tenantId, p: p.projectId, u: p.userId, k: p.keyId, exp }, 'file');

  app.get('/v1/conversations/:id/files', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    const q = ListQuerySchema.safeParse(c.req.query());
    if (!q.success) throw new DreactError(zodMessage(q.error), 'bad_input');
    await ownedConversation(pool, principal, id);
    const shown = shownId(c, id);
    const files = await listHostedFiles(pool, id, q.data.turn ? { turnId: turnIdFor(q.data.turn) } : {});
    const signed = q.data.signed === '1' || q.data.signed === 'true';
    const exp = Date.now() + ttlMs;
    const entries: FileEntry[] = files.map((f) => {
      const url = fileUrl(shown, f.path);
      return {
        ...f,
        url,
        ...(signed ? { signedUrl: `${url}?token=${encodeURIComponent(sign(principal, id, f.path, exp))}` } : {}),
      };
    });
    return c.json({
      conversationId: shown,
      files: entries,
      ...(signed ? { expiresAt: new Date(exp).toISOString() } : {}),
    });
  });

  const download = async (c: Context<GatewayEnv>) => {
    const q = DownloadQuerySchema.safeParse(c.req.query());
    if (!q.success) throw new DreactError(zodMessage(q.error), 'bad_input');
    const tail = /^\/v1\/conversations\/[^/]+\/files\/(.+)$/.exec(requestTarget(c))?.[1];
    if (!tail) throw new DreactError('file path: missing', 'bad_input');
    const path = fileKeyOf(tail);
    let principal: Principal;
    let id: string;
    if (q.data.token !== undefined && c.get('principal') === undefined) {
      ({ principal, id } = await verifyLink(c, q.data.token, path));
    } else {
      principal = need(c, 'read');
      id = await conversationId(c, pool);
    }
    await ownedConversation(pool, principal, id);
    const f = await hostedFile(pool, id, path);
    if (!f) {
      const near = nearFiles(
        path,
        (await listHostedFiles(pool, id)).map((h) => h.path),
      );
      const hint = near.length > 0 ? ` — did you mean ${near.join(', ')}?` : '';
      throw new DreactError(`conversation "${clientIdParam(c)}" has no file "${path}"${hint}`, 'not_found');
    }

    const etag = etagOf(f);
    const inline = INLINE_SAFE_TYPES.has(f.mime) && !(q.data.download === '1' || q.data.download === 'true');
    const headers: Record<string, string> = {
      etag,
      'cache-control': 'private, no-cache',
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-type': /^text\//.test(f.mime) && !/charset=/i.test(f.mime) ? `${f.mime}; charset=utf-8` : f.mime,
      'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', f.name),
    };
    if (!INLINE_SAFE_TYPES.has(f.mime)) headers['content-security-policy'] = "sandbox; default-src 'none'";
    if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers);

    const ifRange = c.req.header('if-range');
    const range =
      ifRange === undefined || ifRange.trim() === etag ? parseRange(c.req.header('range'), f.size) : undefined;
    if (range === 'unsatisfiable') return c.body(null, 416, { ...headers, 'content-range': `bytes */${f.size}` });
    const { start, end } = range ?? { start: 0, end: f.size - 1 };
    const length = f.size === 0 ? 0 : end - start + 1;
    headers['content-length'] = String(length);
    if (range) headers['content-range'] = `bytes ${start}-${end}/${f.size}`;
    const status = range ? 206 : 200;
    if (c.req.method === 'HEAD' || length === 0) return c.body(null, status, headers);
    return c.body(blobStream(pool, id, f, start, end), status, headers);
  };

  /** A signed URL's principal and conversation; 403 for a bad, expired, foreign or revoked link. */
  async function verifyLink(
    c: Context<GatewayEnv>,
    token: string,
    path: string,
  ): Promise<{ principal: Principal; id: string }> {
    const opened = opts.signer.open(token, 'file');
    if ('error' in opened) throw new Forbidden(`${opened.error} file link`);
    const parsed = LinkPayloadSchema.safeParse(opened.body);
    if (!parsed.success) throw new Forbidden('malformed file link');
    const l = parsed.data;
    if (l.exp <= Date.now()) throw new Forbidden('the file link expired: list the files again for a new one');
    const principal: Principal = { tenantId: l.t, projectId: l.p, userId: l.u, keyId: l.k, scopes: ['read'] };
    const clientId = clientIdParam(c);
    if (l.c !== scopeConversationId(principal, clientId).id && l.c !== clientId)
      throw new Forbidden('the file link is for another conversation');
    if (l.f !== path) throw new Forbidden('the file link is for another file');
    if (!(await opts.keyStillActive(l.k))) throw new Forbidden('the API key that signed this file link was revoked');
    return { principal, id: l.c };
  }

  app.get('/v1/conversations/:id/files/*', download);
}
