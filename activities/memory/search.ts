/**
 * react.memsearch over one conversation's index: ordinal and time phrases become filters, the
 * rest of the query goes to lexical search (always) and semantic search (when an embedding
 * provider is configured), fused by RRF with a recency lift (lexical alone: its ts_rank_cd score
 * with the same lift); time-only queries list by time.
 */
import { fuse, liftByRecency, snippet, timeIntent } from '../../core/memory/rank';
import type { MemoryTarget } from '../../core/memory/entries';
import type { MemoryFilter, MemoryHit, MemoryIndex } from '../../store/memory-store';
import { EmbeddingError, type EmbeddingProvider } from './embeddings';

export interface MemsearchParams {
  query: string;
  targets?: MemoryTarget[];
  from?: string | number;
  to?: string | number;
  ordinal?: 'first' | 'last' | number;
  order?: 'relevance' | 'newest' | 'oldest';
  top_k: number;
  days: number;
}

export interface MemsearchResult {
  turn_id: string;
  turn_index: number;
  ts: string;
  target: MemoryTarget;
  path: string;
  snippet: string;
  score: number;
  matched: Array<'lexical' | 'semantic' | 'time'>;
}

const CANDIDATES = 50;

/** `turn_3` / 3 → a turn index; an ISO date → a time bound. */
function bound(v: string | number | undefined): { turn?: number; time?: string } {
  if (v === undefined) return {};
  if (typeof v === 'number') return { turn: v };
  const t = /^turn_(\d+)$/.exec(v.trim());
  if (t) return { turn: Number(t[1]) };
  if (/^\d+$/.test(v.trim())) return { turn: Number(v) };
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new Error(`from/to: ${JSON.stringify(v)} is neither a turn (turn_3 or 3) nor a date`);
  return { time: new Date(ms).toISOString() };
}

export async function memsearch(
  index: MemoryIndex,
  params: MemsearchParams,
  now: Date,
  embedder?: EmbeddingProvider,
  signal?: AbortSignal,
): Promise<{ results: MemsearchResult[]; semantic: boolean; interpreted: Record<string, unknown> }> {
  const intent = timeIntent(params.query, now);
  const from = bound(params.from);
  const to = bound(params.to);
  const daysAfter = new Date(now.getTime() - params.days * 86_400_000).toISOString();
  const filter: MemoryFilter = {
    ...(params.targets?.length ? { targets: params.targets } : {}),
    fromTurn: typeof params.ordinal === 'number' ? params.ordinal : (from.turn ?? intent.fromTurn),
    toTurn: typeof params.ordinal === 'number' ? params.ordinal : (to.turn ?? intent.toTurn),
    after: [daysAfter, from.time, intent.after]
      .filter((x): x is string => !!x)
      .sort()
      .at(-1),
    before: [to.time, intent.before].filter((x): x is string => !!x).sort()[0],
  };
  const order =
    params.ordinal === 'first'
      ? 'oldest'
      : params.ordinal === 'last'
        ? 'newest'
        : params.order && params.order !== 'relevance'
          ? params.order
          : intent.order;
  const interpreted = { ...filter, ...(order ? { order } : {}), text: intent.onlyTime ? '' : intent.rest };
  const toResult = (h: MemoryHit & { score?: number }, matched: MemsearchResult['matched']): MemsearchResult => ({
    turn_id: h.turnId,
    turn_index: h.turnIndex,
    ts: h.ts,
    target: h.target,
    path: h.path,
    snippet: snippet(h.text, intent.rest),
    score: Number((h.score ?? 0).toFixed(6)),
    matched,
  });
  if (
    intent.onlyTime ||
    params.query.trim() === '' ||
    (typeof params.ordinal !== 'undefined' && intent.rest.trim() === '')
  ) {
    const rows = await index.byTime(order ?? 'oldest', filter, params.top_k);
    return { results: rows.map((r) => toResult(r, ['time'])), semantic: false, interpreted };
  }
  // Both halves at once: the lexical query runs in Postgres while the query is embedded and scanned.
  let semanticError: string | undefined;
  const semanticHalf = async (): Promise<MemoryHit[]> => {
    if (!embedder) return [];
    try {
      const [vector] = await embedder.embed([intent.rest], signal);
      return await index.semantic(vector!, embedder.model, filter, CANDIDATES, embedder.minSimilarity);
    } catch (err) {
      // The embeddings service being down degrades the search to lexical, and says so.
      if (!(err instanceof EmbeddingError)) throw err;
      semanticError = err.message;
      return [];
    }
  };
  const [lexical, semantic] = await Promise.all([index.lexical(intent.rest, filter, CANDIDATES), semanticHalf()]);
  const lexKeys = new Set(lexical.map((h) => h.key));
  const semKeys = new Set(semantic.map((h) => h.key));
  let fused = embedder && semanticError === undefined ? fuse([lexical, semantic], now) : liftByRecency(lexical, now);
  if (order)
    fused = [...fused].sort(
      (a, b) => (order === 'oldest' ? 1 : -1) * (a.turnIndex - b.turnIndex || Date.parse(a.ts) - Date.parse(b.ts)),
    );
  return {
    results: fused
      .slice(0, params.top_k)
      .map((h) =>
        toResult(h, [
          ...(lexKeys.has(h.key) ? (['lexical'] as const) : []),
          ...(semKeys.has(h.key) ? (['semantic'] as const) : []),
        ]),
      ),
    semantic: embedder !== undefined && semanticError === undefined,
    interpreted: { ...interpreted, ...(semanticError ? { semantic_error: semanticError } : {}) },
  };
}
