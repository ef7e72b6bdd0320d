/**
 * Sources pool: the per-conversation registry of citable source rows, with stable SIDs.
 *
 * Pure and deterministic. `[[S:n]]` in any turn refers to the row with `sid === n`; merging
 * never changes an existing row's SID.
 */
import { z } from 'zod';
import { formatSidSelector } from './paths';

/** Base64 payloads longer than this are dropped from pool rows. */
export const SOURCES_POOL_MAX_BASE64_CHARS = 4000;

/** Legacy rows carry `local_path`; it becomes `physical_path`. */
function liftLegacyLocalPath(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const row = value as Record<string, unknown>;
  if (!('local_path' in row)) return value;
  const { local_path, ...rest } = row;
  if (rest.physical_path === undefined || rest.physical_path === null || rest.physical_path === '') {
    rest.physical_path = local_path;
  }
  return rest;
}

const optStr = z.string().optional();
const score = z.number().finite().optional();

export const SourceRowSchema = z.preprocess(
  liftLegacyLocalPath,
  z.looseObject({
    sid: z.number().int().positive(),
    title: z.string().default(''),
    url: z.string().default(''),
    /** Short snippet. */
    text: optStr,
    /** Full content (fetched page, extracted text...). */
    content: optStr,
    /** web | file | attachment | manual | skill ... */
    source_type: optStr,
    mime: optStr,
    size_bytes: z.number().int().nonnegative().optional(),
    artifact_path: optStr,
    physical_path: optStr,
    published_time_iso: optStr,
    objective_relevance: score,
    query_relevance: score,
    favicon_url: optStr,
    rn: optStr,
    hosted_uri: optStr,
    key: optStr,
    base64: optStr,
  }),
);
export type SourceRow = z.infer<typeof SourceRowSchema>;

/** Snippet length in the compact SOURCES POOL snapshot. */
export const SOURCES_POOL_SNIPPET_CHARS = 160;

export interface RenderSourcesPoolOptions {
  snippetChars?: number;
}

/**
 * Compact SOURCES POOL snapshot (sid, title, url, short snippet, limited metadata), in SID order.
 * Full rows are read back with `react.read(["so:sources_pool[...]"])`.
 */
export function renderSourcesPool(rows: SourceRow[], options: RenderSourcesPoolOptions = {}): string {
  const snippetChars = options.snippetChars ?? SOURCES_POOL_SNIPPET_CHARS;
  const sorted = [...rows].sort((a, b) => a.sid - b.sid);
  if (sorted.length === 0) return '[SOURCES POOL]\n  - sources: none';
  const lines = [
    '[SOURCES POOL]',
    `  - sources: ${sorted.length} (cite web sources as [[S:n]]; full rows: so:sources_pool[${formatSidSelector(sorted.map((r) => r.sid))}])`,
  ];
  for (const row of sorted) {
    const meta: string[] = [];
    if (row.source_type) meta.push(`type=${row.source_type}`);
    if (row.mime && !/^text\/html\b/i.test(row.mime)) meta.push(`mime=${row.mime}`);
    if (row.mime && /^image\//i.test(row.mime)) meta.push('render-only');
    if (row.published_time_iso) meta.push(`published=${row.published_time_iso}`);
    if (row.objective_relevance !== undefined) meta.push(`relevance=${round2(row.objective_relevance)}`);
    const where = row.url || row.physical_path || row.artifact_path || '';
    const head = [`[S:${row.sid}]`, oneLine(row.title) || '(untitled)'];
    if (where) head.push(`<${oneLine(where)}>`);
    if (meta.length) head.push(`(${meta.join(', ')})`);
    lines.push(`  ${head.join(' ')}`);
    const snippet = oneLine(row.text ?? '');
    if (snippet) lines.push(`      ${clip(snippet, snippetChars)}`);
  }
  return lines.join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

function round2(n: number): string {
  return String(Math.round(n * 100) / 100);
}
