/**
 * Declarations of the web tools and the source-row shape they return for the
 * sources pool. Implementations: activities/tools/web-fetch.ts, web-search.ts.
 */
import { z } from 'zod';
import { declareTool, type ToolRetryPolicy } from './registry';

/** http(s) URL check without I/O (the activity re-validates with `new URL`). */
const HTTP_URL_RE = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

export const HttpUrlSchema = z
  .string()
  .trim()
  .regex(HTTP_URL_RE, { message: 'must be an absolute http:// or https:// URL' });

/**
 * One web row before it enters the sources pool (the pool assigns `sid`); field names
 * and types match `SourceRowSchema` in core/timeline/sources.ts.
 */
export const WebSourceRowSchema = z.object({
  url: z.string(),
  title: z.string(),
  /** Short snippet shown in listings. */
  text: z.string(),
  /** Full readable text (fetch) or the snippet (search). */
  content: z.string(),
  mime: z.string(),
  source_type: z.literal('web'),
  size_bytes: z.number().int().nonnegative().optional(),
  published_time_iso: z.string().optional(),
});
export type WebSourceRow = z.infer<typeof WebSourceRowSchema>;

const WEB_RETRY: ToolRetryPolicy = {
  maximumAttempts: 3,
  initialInterval: 1_000,
  backoffCoefficient: 2,
  maximumInterval: 10_000,
  nonRetryableErrorTypes: ['WebToolInputError'],
};

// ---------------------------------------------------------------- web_fetch

export const WebFetchParamsSchema = z.strictObject({
  urls: z.array(HttpUrlSchema).min(1).max(8).describe('Pages to fetch (http/https), at most 8.'),
  max_chars: z.number().int().min(200).max(200_000).optional().describe('Cap on readable text kept per page.'),
});
export type WebFetchParams = z.output<typeof WebFetchParamsSchema>;

export const webFetch = declareTool({
  id: 'web_fetch',
  description:
    'Fetch web pages and add their readable text to the sources pool (cite them as [[S:n]]). ' +
    'Only text content (HTML, plain text, JSON, XML) is accepted.',
  params: WebFetchParamsSchema,
  strategy: 'exploration',
  timeoutMs: 60_000,
  retry: WEB_RETRY,
  summarize: (p: WebFetchParams) =>
    `tool web_fetch ${p.urls[0] ?? ''}${p.urls.length > 1 ? ` (+${p.urls.length - 1})` : ''}`,
});

// ---------------------------------------------------------------- web_search

export const WebSearchParamsSchema = z.strictObject({
  query: z.string().trim().min(1).max(400).describe('Search query.'),
  top_k: z.number().int().min(1).max(20).default(5).describe('Number of results to return (1-20).'),
});
export type WebSearchParams = z.output<typeof WebSearchParamsSchema>;

export const webSearch = declareTool({
  id: 'web_search',
  description:
    'Search the web. Results (title, url, snippet) are added to the sources pool; fetch a page with web_fetch for its full text.',
  params: WebSearchParamsSchema,
  strategy: 'exploration',
  timeoutMs: 30_000,
  retry: WEB_RETRY,
  summarize: (p: WebSearchParams) => `tool web_search ${JSON.stringify(p.query)}`,
});

export const WEB_TOOLS = [webFetch, webSearch] as const;
