/**
 * web_fetch implementation: HTTP GET with a timeout and a size cap, content-type check,
 * HTML → readable text (html-to-text, preferring <article>/<main>), title extraction.
 * Returns source rows for the sources pool. Every hop (the URL and each redirect, at most 5)
 * goes through the address guard (`activities/net/address-guard.ts`): resolved once, every
 * address judged, the connection pinned to the checked addresses. A refusal is a non-retryable
 * observation naming the URL and the reason ("refused: 127.0.0.1 is loopback"); timeouts,
 * network errors and 408/429/5xx are retryable.
 */
import { charsetOf, decode, extractTitle, HTML_MIMES, htmlToReadableText, isTextMime, snippet } from './web-page-text';
import { addressRefusal, type FetchAllowList } from '../../core/net/address-policy';
import {
  fetchAllowListFromEnv,
  guardUrl,
  HostResolutionError,
  type GuardedTarget,
  type HostResolver,
} from '../net/address-guard';
import { pinnedGet } from '../net/pinned-get';
import { WebFetchParamsSchema, type WebSourceRow } from '../../core/tools/web-tools';
import type { ToolImpl } from './types';
import { formatZodError } from '../../core/validation';

export type WebToolErrorCode =
  | 'bad_input'
  | 'bad_url'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'http_status'
  | 'too_large'
  | 'unsupported_content_type'
  | 'timeout'
  | 'network'
  | 'bad_response'
  | 'not_configured';

/**
 * A classified web tool failure. `name` is `WebToolInputError` for failures that retrying
 * cannot fix (listed in the tool's nonRetryableErrorTypes) and `WebToolError` otherwise.
 */
export class WebToolError extends Error {
  readonly code: WebToolErrorCode;
  readonly retryable: boolean;
  readonly status?: number;

  constructor(
    code: WebToolErrorCode,
    message: string,
    opts: { retryable?: boolean; status?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.code = code;
    this.retryable = opts.retryable ?? false;
    this.name = this.retryable ? 'WebToolError' : 'WebToolInputError';
    this.status = opts.status;
  }
}

export interface WebFetchOptions {
  /** Per-request timeout, ms (default 15 000). */
  timeoutMs?: number;
  /** Maximum response body size, bytes (default 5 MiB). */
  maxBytes?: number;
  /** Readable text kept per page, characters (default 100 000; params.max_chars overrides). */
  maxContentChars?: number;
  /** Snippet length for `text`, characters (default 400). */
  snippetChars?: number;
  userAgent?: string;
  /**
   * Allow loopback, private, link-local and other non-public addresses (default false: the
   * agent must not reach internal services or cloud metadata endpoints). Tests and local
   * setups opt in.
   */
  allowPrivateNetwork?: boolean;
  /**
   * Operator allow-list (intranet hosts, ranges and their ports); `createWebFetchImpl` reads
   * `DREACT_FETCH_ALLOW_HOSTS` when this is absent. Default for `fetchWebPage`: none.
   */
  allowList?: FetchAllowList;
  /** Host resolver (tests inject one); default: the system resolver. Each hop resolves once. */
  resolver?: HostResolver;
  /** Cancellation (e.g. the activity's cancellation signal). */
  signal?: AbortSignal;
}

const DEFAULTS = { timeoutMs: 15_000, maxBytes: 5 * 1024 * 1024, maxContentChars: 100_000, snippetChars: 400 };
const DEFAULT_UA = 'durable-react/0.1 (+web_fetch)';
/** Validates an http(s) URL; throws a non-retryable error with a readable message. */
export function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new WebToolError('bad_url', `web_fetch: not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebToolError(
      'bad_url',
      `web_fetch: only http and https URLs are supported, got ${url.protocol} in ${JSON.stringify(raw)}`,
    );
  }
  return url;
}

async function readCapped(res: Response, maxBytes: number, url: string): Promise<Uint8Array> {
  const tooLarge = (n: number | string): WebToolError =>
    new WebToolError('too_large', `web_fetch: ${url} is too large (${n} bytes; the limit is ${maxBytes} bytes)`);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(declared);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${maxBytes}`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** True for addresses the agent must not reach by default (anything but public unicast). */
export function isNonPublicAddress(ip: string): boolean {
  return addressRefusal(ip) !== undefined;
}

/** Checks one hop's URL and resolves it once; throws the refusal as a non-retryable error. */
async function checkHop(url: URL, options: WebFetchOptions): Promise<GuardedTarget> {
  let checked: Awaited<ReturnType<typeof guardUrl>>;
  try {
    checked = await guardUrl(url, {
      allowList: options.allowList,
      allowPrivateNetwork: options.allowPrivateNetwork,
      resolver: options.resolver,
    });
  } catch (err) {
    if (!(err instanceof HostResolutionError)) throw err;
    throw new WebToolError('network', `web_fetch: ${err.message}`, { retryable: true, cause: err });
  }
  if (!checked.ok) throw new WebToolError('blocked_address', `web_fetch: refused ${url.href}: ${checked.reason}`);
  return checked.target;
}

/** Fetches one page and returns its source row. Throws WebToolError with a readable message. */
export async function fetchWebPage(rawUrl: string, options: WebFetchOptions = {}): Promise<WebSourceRow> {
  const opts = { ...DEFAULTS, ...options };
  const url = parseHttpUrl(rawUrl);
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const href = url.href;
  try {
    let current = url;
    let res: Response;
    for (let hop = 0; ; hop++) {
      const target = await checkHop(current, options);
      res = await pinnedGet(target, {
        signal,
        headers: {
          'user-agent': options.userAgent ?? DEFAULT_UA,
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
        },
      });
      const location = res.headers.get('location');
      if (!REDIRECT_STATUSES.has(res.status) || !location) break;
      await res.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS)
        throw new WebToolError('too_many_redirects', `web_fetch: ${href} redirected more than ${MAX_REDIRECTS} times`);
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new WebToolError(
          'bad_url',
          `web_fetch: ${href} redirected to an invalid URL ${JSON.stringify(location)}`,
        );
      }
      current = parseHttpUrl(next.href);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
      throw new WebToolError(
        'http_status',
        `web_fetch: ${href} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
        {
          retryable,
          status: res.status,
        },
      );
    }
    const contentType = res.headers.get('content-type') ?? '';
    const mime = (contentType.split(';')[0] ?? '').trim().toLowerCase() || 'application/octet-stream';
    if (!isTextMime(mime)) {
      await res.body?.cancel().catch(() => undefined);
      throw new WebToolError(
        'unsupported_content_type',
        `web_fetch: ${href} returned ${mime}, which is not text (only HTML, text, JSON and XML are supported)`,
      );
    }
    const bytes = await readCapped(res, opts.maxBytes, href);
    const body = decode(bytes, charsetOf(contentType));
    const finalUrl = current.href;
    const isHtml = HTML_MIMES.has(mime);
    const title = isHtml ? extractTitle(body) : '';
    const full = isHtml ? htmlToReadableText(body) : body.trim();
    const content = full.length > opts.maxContentChars ? `${full.slice(0, opts.maxContentChars)}\n[…truncated]` : full;
    return {
      url: finalUrl,
      title: title || finalUrl,
      text: snippet(content, opts.snippetChars),
      content,
      mime,
      source_type: 'web',
      size_bytes: bytes.byteLength,
    };
  } catch (err) {
    if (err instanceof WebToolError) throw err;
    if (timeout.aborted)
      throw new WebToolError('timeout', `web_fetch: ${href} did not answer within ${opts.timeoutMs} ms`, {
        retryable: true,
        cause: err,
      });
    if (options.signal?.aborted) throw new WebToolError('network', `web_fetch: ${href} was cancelled`, { cause: err });
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new WebToolError('network', `web_fetch: could not fetch ${href}: ${reason}`, { retryable: true, cause: err });
  }
}

export interface WebFetchResult {
  rows: WebSourceRow[];
  errors: Array<{ url: string; code: WebToolErrorCode; error: string }>;
}

/**
 * The web_fetch tool: validates params, fetches each URL sequentially and returns the rows
 * plus per-URL errors. Throws only when params are invalid or every URL failed.
 */
export async function webFetch(rawParams: unknown, options: WebFetchOptions = {}): Promise<WebFetchResult> {
  const parsed = WebFetchParamsSchema.safeParse(rawParams);
  if (!parsed.success) {
    const msg = formatZodError(parsed.error, { root: '(params)' });
    throw new WebToolError('bad_input', `web_fetch: invalid params: ${msg}`);
  }
  const { urls, max_chars } = parsed.data;
  const perPage: WebFetchOptions = max_chars !== undefined ? { ...options, maxContentChars: max_chars } : options;
  const result: WebFetchResult = { rows: [], errors: [] };
  let lastError: WebToolError | undefined;
  for (const url of urls) {
    try {
      result.rows.push(await fetchWebPage(url, perPage));
    } catch (err) {
      if (!(err instanceof WebToolError)) throw err;
      lastError = err;
      result.errors.push({ url, code: err.code, error: err.message });
    }
  }
  if (result.rows.length === 0 && lastError) {
    if (urls.length === 1) throw lastError;
    const retryable = result.errors.some((e) => e.code === 'timeout' || e.code === 'network');
    throw new WebToolError(
      lastError.code,
      `web_fetch: every URL failed: ${result.errors.map((e) => e.error).join(' | ')}`,
      { retryable },
    );
  }
  return result;
}

/**
 * Tool-activity adapter (also the exec supervisor's proxied web_fetch). Rows travel in
 * `meta.source_rows` for the sources pool (which assigns SIDs); retryable failures are rethrown
 * so the activity retry policy applies, others (refusals included) become a failed observation
 * the model sees. Without explicit options, `DREACT_FETCH_ALLOW_HOSTS` is the allow-list (read
 * here, so a bad value fails the worker's start) and `DREACT_WEB_ALLOW_PRIVATE=1` turns the
 * address checks off (local development).
 */
export function createWebFetchImpl(options?: Omit<WebFetchOptions, 'signal'>): ToolImpl {
  const allowList = options?.allowList ?? fetchAllowListFromEnv();
  return {
    id: 'web_fetch',
    async run(params, ctx) {
      const opts: WebFetchOptions = {
        allowPrivateNetwork: process.env.DREACT_WEB_ALLOW_PRIVATE === '1',
        ...options,
        allowList,
        signal: ctx.signal,
      };
      try {
        const res = await webFetch(params, opts);
        return {
          ok: true,
          text: JSON.stringify({
            status: 'fetched',
            pages: res.rows.map((r) => ({ url: r.url, title: r.title, content: r.content })),
            errors: res.errors,
          }),
          mime: 'application/json',
          meta: { source_rows: res.rows, errors: res.errors },
        };
      } catch (err) {
        if (err instanceof WebToolError && !err.retryable)
          return { ok: false, text: err.message, meta: { code: err.code } };
        throw err;
      }
    },
  };
}

let defaultImpl: ToolImpl | undefined;
/** The default web_fetch, built on first use (so a bad allow-list fails a call, not an import). */
export const webFetchImpl: ToolImpl = {
  id: 'web_fetch',
  run: (params, ctx) => (defaultImpl ??= createWebFetchImpl()).run(params, ctx),
};
