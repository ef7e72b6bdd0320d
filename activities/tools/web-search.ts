/**
 * web_search implementation: a small provider interface and two real HTTP providers
 * (Brave Search API, SearXNG JSON API), selected from the environment. Returns source rows.
 */
import { convert } from 'html-to-text';
import { WebSearchParamsSchema, type WebSourceRow } from '../../core/tools/web-tools';
import { WebToolError } from './web-fetch';
import type { ToolImpl } from './types';
import { formatZodError } from '../../core/validation';

export interface WebSearchHit {
  url: string;
  title: string;
  snippet: string;
  published_time_iso?: string;
}

export interface WebSearchProvider {
  readonly id: string;
  search(query: string, topK: number, signal?: AbortSignal): Promise<WebSearchHit[]>;
}

interface HttpOptions {
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

async function getJson(
  provider: string,
  url: URL,
  headers: Record<string, string>,
  opts: HttpOptions,
  signal?: AbortSignal,
): Promise<unknown> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await (opts.fetchImpl ?? fetch)(url.href, {
      method: 'GET',
      headers: { accept: 'application/json', ...headers },
      signal: combined,
    });
  } catch (err) {
    if (timeout.aborted)
      throw new WebToolError('timeout', `web_search (${provider}): no answer within ${timeoutMs} ms`, {
        retryable: true,
        cause: err,
      });
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new WebToolError('network', `web_search (${provider}): request failed: ${reason}`, {
      retryable: !signal?.aborted,
      cause: err,
    });
  }
  const body = await res.text();
  if (!res.ok) {
    const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
    throw new WebToolError('http_status', `web_search (${provider}): HTTP ${res.status}: ${body.slice(0, 200)}`, {
      retryable,
      status: res.status,
    });
  }
  try {
    return JSON.parse(body);
  } catch {
    throw new WebToolError('bad_response', `web_search (${provider}): the response is not JSON: ${body.slice(0, 200)}`);
  }
}

function plain(s: unknown): string {
  if (typeof s !== 'string') return '';
  return convert(s, { wordwrap: false }).replace(/\s+/g, ' ').trim();
}

function isoOrUndefined(v: unknown): string | undefined {
  if (typeof v !== 'string' || !v) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function field(o: unknown, key: string): unknown {
  return o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined;
}

function hitFrom(url: unknown, title: unknown, snippet: unknown, published: unknown): WebSearchHit | undefined {
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return undefined;
  const hit: WebSearchHit = { url, title: plain(title) || url, snippet: plain(snippet) };
  const iso = isoOrUndefined(published);
  if (iso) hit.published_time_iso = iso;
  return hit;
}

/** Brave Search API (`BRAVE_API_KEY`). */
export class BraveSearchProvider implements WebSearchProvider {
  readonly id = 'brave';
  private readonly endpoint: string;

  constructor(private readonly config: { apiKey: string; endpoint?: string } & HttpOptions) {
    if (!config.apiKey) throw new Error('BraveSearchProvider: apiKey is required (set BRAVE_API_KEY)');
    this.endpoint = config.endpoint ?? 'https://api.search.brave.com/res/v1/web/search';
  }

  async search(query: string, topK: number, signal?: AbortSignal): Promise<WebSearchHit[]> {
    const url = new URL(this.endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(topK, 20)));
    const json = await getJson(this.id, url, { 'x-subscription-token': this.config.apiKey }, this.config, signal);
    const results = asArray(field(field(json, 'web'), 'results'));
    return results
      .map((r) => hitFrom(field(r, 'url'), field(r, 'title'), field(r, 'description'), field(r, 'page_age')))
      .filter((h): h is WebSearchHit => h !== undefined)
      .slice(0, topK);
  }
}

/** SearXNG instance with the JSON format enabled (`DREACT_SEARXNG_URL`, e.g. http://localhost:8888). */
export class SearxngSearchProvider implements WebSearchProvider {
  readonly id = 'searxng';

  constructor(private readonly config: { baseUrl: string } & HttpOptions) {
    if (!config.baseUrl) throw new Error('SearxngSearchProvider: baseUrl is required (set DREACT_SEARXNG_URL)');
  }

  async search(query: string, topK: number, signal?: AbortSignal): Promise<WebSearchHit[]> {
    const url = new URL('search', this.config.baseUrl.endsWith('/') ? this.config.baseUrl : `${this.config.baseUrl}/`);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const json = await getJson(this.id, url, {}, this.config, signal);
    const results = asArray(field(json, 'results'));
    return results
      .map((r) => hitFrom(field(r, 'url'), field(r, 'title'), field(r, 'content'), field(r, 'publishedDate')))
      .filter((h): h is WebSearchHit => h !== undefined)
      .slice(0, topK);
  }
}

/**
 * The provider configured by the environment: SearXNG when `DREACT_SEARXNG_URL` is set,
 * else Brave when `BRAVE_API_KEY` is set; otherwise a clear error.
 */
export function searchProviderFromEnv(
  env: Record<string, string | undefined> = process.env,
  http: HttpOptions = {},
): WebSearchProvider {
  if (env.DREACT_SEARXNG_URL) return new SearxngSearchProvider({ baseUrl: env.DREACT_SEARXNG_URL, ...http });
  if (env.BRAVE_API_KEY) {
    return new BraveSearchProvider({
      apiKey: env.BRAVE_API_KEY,
      ...http,
      ...(env.DREACT_BRAVE_ENDPOINT ? { endpoint: env.DREACT_BRAVE_ENDPOINT } : {}),
    });
  }
  throw new WebToolError(
    'not_configured',
    'web_search is not configured: set DREACT_SEARXNG_URL (a SearXNG instance with JSON output) or BRAVE_API_KEY (Brave Search API)',
  );
}

/** The web_search tool: validates params, queries the provider, returns source rows in rank order. */
export async function webSearch(
  rawParams: unknown,
  provider: WebSearchProvider,
  signal?: AbortSignal,
): Promise<{ rows: WebSourceRow[]; provider: string }> {
  const parsed = WebSearchParamsSchema.safeParse(rawParams);
  if (!parsed.success) {
    const msg = formatZodError(parsed.error, { root: '(params)' });
    throw new WebToolError('bad_input', `web_search: invalid params: ${msg}`);
  }
  const { query, top_k } = parsed.data;
  const hits = await provider.search(query, top_k, signal);
  const seen = new Set<string>();
  const rows: WebSourceRow[] = [];
  for (const h of hits) {
    if (seen.has(h.url)) continue;
    seen.add(h.url);
    const row: WebSourceRow = {
      url: h.url,
      title: h.title,
      text: h.snippet,
      content: h.snippet,
      mime: 'text/html',
      source_type: 'web',
    };
    if (h.published_time_iso) row.published_time_iso = h.published_time_iso;
    rows.push(row);
  }
  return { rows, provider: provider.id };
}

/**
 * Tool-activity adapter. The provider is resolved from the environment on first use (so a
 * worker without search configuration starts, and the call explains what to set).
 */
export function createWebSearchImpl(provider?: WebSearchProvider): ToolImpl {
  let resolved = provider;
  return {
    id: 'web_search',
    async run(params, ctx) {
      try {
        resolved ??= searchProviderFromEnv();
        const res = await webSearch(params, resolved, ctx.signal);
        return {
          ok: true,
          text: JSON.stringify({
            status: 'searched',
            provider: res.provider,
            results: res.rows.map((r) => ({ url: r.url, title: r.title, snippet: r.text })),
          }),
          mime: 'application/json',
          meta: { source_rows: res.rows },
        };
      } catch (err) {
        if (err instanceof WebToolError && !err.retryable)
          return { ok: false, text: err.message, meta: { code: err.code } };
        throw err;
      }
    },
  };
}
