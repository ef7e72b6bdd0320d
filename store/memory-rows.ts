/**
 * What every memory query shares: the filter (targets, turn and time bounds) as SQL, the columns
 * a hit reads and the hit it makes.
 */
import type { MemoryEntry, MemoryTarget } from '../core/memory/entries';

export interface MemoryFilter {
  targets?: readonly MemoryTarget[];
  fromTurn?: number;
  toTurn?: number;
  after?: string;
  before?: string;
}

export type MemoryHit = Pick<MemoryEntry, 'key' | 'turnId' | 'turnIndex' | 'target' | 'path' | 'ts' | 'text'> & {
  /** ts_rank_cd (lexical) or cosine similarity (semantic); 0 for time listings. */
  raw: number;
};

export const COLUMNS = 'entry_key, turn_id, turn_index, target, path, ts, text';

/** WHERE clauses for a filter; parameters start at `$first`. */
export function memoryFilterSql(filter: MemoryFilter, first: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [
    filter.targets?.length ? [...filter.targets] : null,
    filter.fromTurn ?? null,
    filter.toTurn ?? null,
    filter.after ?? null,
    filter.before ?? null,
  ];
  const p = (i: number) => `$${first + i}`;
  return {
    sql:
      ` AND (${p(0)}::text[] IS NULL OR target = ANY(${p(0)}::text[]))` +
      ` AND (${p(1)}::int IS NULL OR turn_index >= ${p(1)}::int) AND (${p(2)}::int IS NULL OR turn_index <= ${p(2)}::int)` +
      ` AND (${p(3)}::timestamptz IS NULL OR ts >= ${p(3)}::timestamptz) AND (${p(4)}::timestamptz IS NULL OR ts < ${p(4)}::timestamptz)`,
    params,
  };
}

export function hit(r: Record<string, unknown>, raw: unknown): MemoryHit {
  return {
    key: r.entry_key as string,
    turnId: r.turn_id as string,
    turnIndex: r.turn_index as number,
    target: r.target as MemoryTarget,
    path: r.path as string,
    ts: (r.ts as Date).toISOString(),
    text: r.text as string,
    raw: Number(raw ?? 0),
  };
}
