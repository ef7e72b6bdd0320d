/**
 * Sources pool: the per-conversation registry of citable source rows, with stable SIDs.
 *
 * Pure and deterministic. `[[S:n]]` in any turn refers to the row with `sid === n`; merging
 * never changes an existing row's SID.
 */
import { z } from 'zod';
import { parsePath, paths } from './paths';
import { formatZodError } from '../validation';

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

const SourceRowObject = z.looseObject({
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
});
export const SourceRowSchema = z.preprocess(liftLegacyLocalPath, SourceRowObject);
export type SourceRow = z.infer<typeof SourceRowSchema>;

/** Rows coming from tools or older data: the SID may be missing, local, or clash with the pool. */
export const IncomingSourceRowSchema = z.preprocess(
  liftLegacyLocalPath,
  SourceRowObject.extend({ sid: z.number().int().nullable().optional() }),
);
export type IncomingSourceRow =
  z.input<typeof SourceRowObject> extends infer T
    ? Omit<T, 'sid'> & { sid?: number | null; local_path?: string }
    : never;

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
    `  - sources: ${sorted.length} (cite web sources as [[S:n]]; full rows: ${paths.sourcesPool(sorted.map((r) => r.sid))})`,
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

// ---------------------------------------------------------------------------------------------
// URL normalisation and dedup keys
// ---------------------------------------------------------------------------------------------

const TRACKING_PARAM_RE = /^(utm_[^=]*|gclid|fbclid)$/i;
const OPAQUE_SCHEME_RE = /^(mailto|data|urn|tel|javascript|about|blob|file):/i;
const HAS_AUTHORITY_SCHEME_RE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Normalised URL or `undefined` when `raw` is not a URL. Lower-cases scheme and host (WHATWG),
 * adds `https://` when the scheme is missing, drops a port only when it is the scheme's default
 * (80 for http, 443 for https...), drops the fragment and tracking parameters (utm_*, gclid,
 * fbclid) keeping the other parameters in order, and strips trailing slashes except the root.
 */
export function tryNormalizeUrl(raw: string): string | undefined {
  let s = raw.trim();
  if (s === '' || /\s/.test(s)) return undefined;
  if (s.startsWith('//')) s = `https:${s}`;
  else if (OPAQUE_SCHEME_RE.test(s)) return URL.canParse(s) ? new URL(s).href : undefined;
  else if (!HAS_AUTHORITY_SCHEME_RE.test(s)) s = `https://${s}`;
  if (!URL.canParse(s)) return undefined;
  const u = new URL(s);
  if (!u.host) return undefined;
  u.hash = '';
  const kept = u.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '' && !TRACKING_PARAM_RE.test(pair.split('=')[0]!));
  u.search = kept.length > 0 ? `?${kept.join('&')}` : '';
  if (u.pathname.length > 1 && u.pathname.endsWith('/')) u.pathname = u.pathname.replace(/\/+$/, '') || '/';
  return u.href;
}

/** Like tryNormalizeUrl, but throws a readable error on a non-URL. */
export function normalizeUrl(raw: string): string {
  const out = tryNormalizeUrl(raw);
  if (out === undefined) throw new Error(`not a URL: ${JSON.stringify(raw)}`);
  return out;
}

/**
 * Dedup key of a row: `local:<physical_path>` for local files, else the normalised URL
 * (`raw:<url>` when the URL does not parse), else `undefined` (the row never merges).
 */
export function sourceDedupKey(row: { url?: string; physical_path?: string }): string | undefined {
  if (row.physical_path) return `local:${row.physical_path}`;
  const url = (row.url ?? '').trim();
  if (!url) return undefined;
  return tryNormalizeUrl(url) ?? `raw:${url}`;
}

// ---------------------------------------------------------------------------------------------
// Merge, remap, select
// ---------------------------------------------------------------------------------------------

export interface MergeSourcesResult {
  pool: SourceRow[];
  /** Incoming SID -> pool SID, for every incoming row that had a SID. */
  mapping: Record<number, number>;
  added: number[];
  updated: number[];
}

export interface MergeSourcesOptions {
  /** Keep an incoming row's own SID when it is positive and unused (default true). */
  keepIncomingSids?: boolean;
}

const LONGER_WINS = ['title', 'text', 'content'] as const;
const MAX_WINS = ['objective_relevance', 'query_relevance'] as const;

function isBlank(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function dropBigBase64<T extends { base64?: string }>(row: T): T {
  if (row.base64 === undefined || row.base64.length <= SOURCES_POOL_MAX_BASE64_CHARS) return row;
  const { base64: _dropped, ...rest } = row;
  return rest as T;
}

function mergeRow(into: SourceRow, from: Record<string, unknown>): SourceRow {
  const out: Record<string, unknown> = { ...into };
  for (const [k, v] of Object.entries(from)) {
    if (k === 'sid' || isBlank(v)) continue;
    if (isBlank(out[k])) out[k] = v;
  }
  for (const k of LONGER_WINS) {
    const a = into[k] ?? '';
    const b = typeof from[k] === 'string' ? (from[k] as string) : '';
    out[k] = b.length > a.length ? b : into[k];
    if (out[k] === undefined) delete out[k];
  }
  for (const k of MAX_WINS) {
    const vals = [into[k], from[k]].filter((v): v is number => typeof v === 'number');
    if (vals.length > 0) out[k] = Math.max(...vals);
  }
  return out as SourceRow;
}

/**
 * Merges incoming rows into the pool. Existing rows keep their SIDs; a duplicate (same dedup key)
 * enriches the existing row (longer title/text/content, missing attributes copied, max relevance);
 * a new row keeps its SID if positive and unused (unless `keepIncomingSids` is false), otherwise
 * gets max_sid + 1. The output is sorted by SID.
 */
export function mergeSources(
  pool: SourceRow[],
  incoming: IncomingSourceRow[],
  options: MergeSourcesOptions = {},
): MergeSourcesResult {
  const keep = options.keepIncomingSids ?? true;
  const rows: SourceRow[] = pool.map((r) => dropBigBase64(SourceRowSchema.parse(r)));
  const used = new Set<number>();
  const byKey = new Map<string, number>();
  rows.forEach((r, i) => {
    if (used.has(r.sid)) throw new Error(`sources pool has duplicate sid ${r.sid}`);
    used.add(r.sid);
    const k = sourceDedupKey(r);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, i);
  });
  let maxSid = Math.max(0, ...used);
  const mapping: Record<number, number> = {};
  const added: number[] = [];
  const updated = new Set<number>();
  incoming.forEach((input, n) => {
    const parsed = IncomingSourceRowSchema.safeParse(input);
    if (!parsed.success) {
      const issues = formatZodError(parsed.error, { root: '(row)' });
      throw new Error(`invalid source row #${n + 1}: ${issues}`);
    }
    const row = dropBigBase64(parsed.data);
    const localSid = row.sid ?? undefined;
    const k = sourceDedupKey(row);
    const at = k === undefined ? undefined : byKey.get(k);
    if (at !== undefined) {
      const target = rows[at]!;
      rows[at] = mergeRow(target, row);
      if (localSid !== undefined) mapping[localSid] = target.sid;
      if (!added.includes(target.sid)) updated.add(target.sid);
      return;
    }
    const sid = keep && localSid !== undefined && localSid > 0 && !used.has(localSid) ? localSid : maxSid + 1;
    used.add(sid);
    maxSid = Math.max(maxSid, sid);
    rows.push(SourceRowSchema.parse({ ...row, sid }));
    if (k !== undefined) byKey.set(k, rows.length - 1);
    if (localSid !== undefined) mapping[localSid] = sid;
    added.push(sid);
  });
  rows.sort((a, b) => a.sid - b.sid);
  return { pool: rows, mapping, added, updated: [...updated].sort((a, b) => a - b) };
}

/** Tool-local SIDs (1..n per call) are always remapped onto the pool: new rows get max_sid + 1. */
export function remapToolSources(pool: SourceRow[], toolRows: IncomingSourceRow[]): MergeSourcesResult {
  return mergeSources(pool, toolRows, { keepIncomingSids: false });
}

/**
 * Rows for a selector (`so:sources_pool[1,3-5]`, `sources_pool[..]`, `so:conv_<id>.sources_pool[..]`,
 * a SID list, or `null` for all), in pool order. Unknown SIDs are skipped. A selector whose owner
 * segment names a conversation other than `conversationId` selects no rows: the pool is this
 * conversation's.
 */
export function selectSources(
  pool: SourceRow[],
  selector: string | number[] | null,
  conversationId?: string,
): SourceRow[] {
  let sids: number[] | null;
  if (typeof selector === 'string') {
    const p = parsePath(selector);
    if (p.kind !== 'so.pool') throw new Error(`not a sources pool path: "${selector}"`);
    if (p.conversationId !== undefined && p.conversationId !== conversationId) return [];
    sids = p.sids;
  } else {
    sids = selector;
  }
  if (sids === null) return [...pool];
  const want = new Set(sids);
  return pool.filter((r) => want.has(r.sid));
}

/** Attachments and produced files enter the pool only when they are images. */
export function isPoolEligibleFile(mime: string | undefined): boolean {
  return typeof mime === 'string' && /^image\//i.test(mime.trim());
}
