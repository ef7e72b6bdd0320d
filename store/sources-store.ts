/**
 * Sources pool persistence: one artifact per conversation (kind `conv.sources_pool`, key
 * `latest`, payload `{sources_pool: [...]}`), merged under a per-conversation advisory lock so
 * concurrent tool activities never lose rows. SIDs are stable: merging never renumbers a row.
 *
 * Tools return rows with tool-local SIDs (explicit `sid`, else 1..n by position); the tool
 * activity merges them (`mergeToolSources`) and rewrites the observation text so the model only
 * ever sees pool SIDs (`rewriteToolSids`).
 */
import type { Pool } from 'pg';
import type { Queryable } from './db';
import { parseSidList } from '../core/channels/citations';
import {
  IncomingSourceRowSchema,
  remapToolSources,
  SourceRowSchema,
  sourceDedupKey,
  type IncomingSourceRow,
  type MergeSourcesResult,
  type SourceRow,
} from '../core/timeline/sources';
import { getArtifact, putArtifact } from './timeline-store';
import { formatZodError } from '../core/validation';

/** Artifact kind and key of the pool (`payload.sources_pool` holds the rows). */
export const SOURCES_POOL_KIND = 'conv.sources_pool';
export const SOURCES_POOL_KEY = 'latest';

/** The conversation's pool in SID order (empty when nothing was ever merged). */
export async function loadSourcesPool(db: Queryable, conversationId: string): Promise<SourceRow[]> {
  const art = await getArtifact(db, conversationId, SOURCES_POOL_KIND, SOURCES_POOL_KEY);
  return art ? sourcesPoolRows(conversationId, art.payload) : [];
}

/** The pool's rows from its artifact's payload (`{sources_pool: [...]}`); a corrupt pool is an error, never empty. */
export function sourcesPoolRows(conversationId: string, payload: unknown): SourceRow[] {
  const rows = (payload as { sources_pool?: unknown } | null | undefined)?.sources_pool;
  if (!Array.isArray(rows))
    throw new Error(`sources pool of ${conversationId} is corrupt: payload.sources_pool is not a list`);
  return rows.map((r, i) => {
    const parsed = SourceRowSchema.safeParse(r);
    if (!parsed.success)
      throw new Error(
        `sources pool of ${conversationId}: row #${i + 1} is invalid: ${formatZodError(parsed.error, { root: '(row)' })}`,
      );
    return parsed.data;
  });
}

/** Replaces the stored pool (callers normally use `mergeSourcesIntoPool`). */
export async function saveSourcesPool(
  db: Queryable,
  conversationId: string,
  rows: SourceRow[],
  turnId?: string,
): Promise<void> {
  await putArtifact(db, conversationId, {
    kind: SOURCES_POOL_KIND,
    key: SOURCES_POOL_KEY,
    ...(turnId !== undefined ? { turnId } : {}),
    mime: 'application/json',
    payload: { sources_pool: rows },
  });
}

/**
 * Merges rows into the stored pool inside one transaction holding a per-conversation lock.
 * Incoming SIDs are tool-local and always remapped: new rows get max_sid + 1, duplicates (same
 * normalised URL / physical path) keep the pool row's SID and enrich it.
 * Re-merging the same rows (a retried activity) maps them onto the same SIDs (URL dedup).
 */
export async function mergeSourcesIntoPool(
  pool: Pool,
  conversationId: string,
  incoming: IncomingSourceRow[],
  opts: { turnId?: string } = {},
): Promise<MergeSourcesResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`sources_pool:${conversationId}`]);
    const current = await loadSourcesPool(client, conversationId);
    const result = remapToolSources(current, incoming);
    if (result.added.length > 0 || result.updated.length > 0)
      await saveSourcesPool(client, conversationId, result.pool, opts.turnId);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => console.error(`[sources] rollback failed: ${e.message}`));
    throw err;
  } finally {
    client.release();
  }
}

export interface ToolSourcesMerge {
  /** The observation text with tool-local SIDs replaced by pool SIDs. */
  text: string;
  /** Pool SIDs of the tool's rows, in the tool's order. */
  sids: number[];
  added: number[];
  /** Tool-local SID -> pool SID. */
  mapping: Record<number, number>;
  /** Rows that were not valid source rows (position in source_rows, reason). */
  rejected: Array<{ index: number; error: string }>;
}

/** Tool rows with their tool-local SIDs made explicit (given `sid`, else position 1..n). */
export function withLocalSids(rows: IncomingSourceRow[]): Array<IncomingSourceRow & { sid: number }> {
  const taken = new Set(rows.map((r) => r.sid).filter((s): s is number => typeof s === 'number' && s > 0));
  let next = 1;
  return rows.map((r) => {
    if (typeof r.sid === 'number' && r.sid > 0) return { ...r, sid: r.sid };
    while (taken.has(next)) next++;
    taken.add(next);
    return { ...r, sid: next };
  });
}

/**
 * Merges a tool observation's `source_rows` into the pool and rewrites its text to pool SIDs.
 * Malformed rows (a tool bug) are left out and reported in `rejected`, never merged.
 */
export async function mergeToolSources(
  pool: Pool,
  conversationId: string,
  rows: unknown[],
  text: string,
  opts: { turnId?: string } = {},
): Promise<ToolSourcesMerge> {
  if (!Array.isArray(rows)) throw new Error('source_rows must be a list of source rows');
  const rejected: ToolSourcesMerge['rejected'] = [];
  const valid: IncomingSourceRow[] = [];
  rows.forEach((row, i) => {
    const parsed = IncomingSourceRowSchema.safeParse(row);
    if (parsed.success) valid.push(row as IncomingSourceRow);
    else
      rejected.push({
        index: i,
        error: formatZodError(parsed.error, { root: '(row)' }),
      });
  });
  const local = withLocalSids(valid);
  const result =
    local.length > 0
      ? await mergeSourcesIntoPool(pool, conversationId, local, opts)
      : { mapping: {} as Record<number, number>, added: [] as number[] };
  const sids = local.map((r) => result.mapping[r.sid]!);
  return {
    text: rewriteToolSids(text, local, result.mapping),
    sids,
    added: result.added,
    mapping: result.mapping,
    rejected,
  };
}

const CITE_RE = /\[\[\s*S\s*:\s*([0-9,\s\-–—]+)\]\]/g;

/**
 * Rewrites tool-local SIDs in an observation to pool SIDs. JSON text: every object whose `url`
 * matches a tool row (normalised) gets that row's pool `sid` (first key); other objects with a
 * numeric `sid` are remapped. Any text: `[[S:n]]` / `[[S:1,2-3]]` tokens are remapped.
 */
export function rewriteToolSids(
  text: string,
  rows: Array<IncomingSourceRow & { sid: number }>,
  mapping: Record<number, number>,
): string {
  const byUrl = new Map<string, number>();
  for (const r of rows) {
    const k = sourceDedupKey({ url: typeof r.url === 'string' ? r.url : '' });
    const sid = mapping[r.sid];
    if (k !== undefined && sid !== undefined && !byUrl.has(k)) byUrl.set(k, sid);
  }
  const remapCites = (s: string) =>
    s.replace(CITE_RE, (token, body: string) => {
      const ids = parseSidList(body).map((n) => mapping[n]);
      return ids.every((n) => n !== undefined) && ids.length > 0 ? `[[S:${ids.join(',')}]]` : token;
    });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return remapCites(text);
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return remapCites(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const obj = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    let sid: number | undefined;
    if (typeof obj.sid === 'number') sid = mapping[obj.sid];
    if (sid === undefined && typeof obj.url === 'string') {
      const k = sourceDedupKey({ url: obj.url });
      sid = k === undefined ? undefined : byUrl.get(k);
    }
    if (sid !== undefined) out.sid = sid;
    for (const [key, val] of Object.entries(obj)) if (!(key === 'sid' && sid !== undefined)) out[key] = walk(val);
    return out;
  };
  return JSON.stringify(walk(json));
}
