/**
 * react.memsearch ranking and query understanding: reciprocal-rank fusion of the lexical and
 * semantic lists (k = 60), a recency lift `1 + 0.25 × recency` (recency = 0.5^(age / 7 days)),
 * and the ordinal / time phrases people use ("the first message", "turn 3", "yesterday",
 * "last week", "3 days ago"). Pure.
 */

export const RRF_K = 60;
export const RECENCY_WEIGHT = 0.25;
export const RECENCY_HALF_LIFE_DAYS = 7;
const DAY_MS = 86_400_000;

export interface Ranked {
  key: string;
  ts: string;
}

/** 0.5^(age in days / half-life), 1 for now or the future. */
export function recency(ts: string, now: Date): number {
  const age = Math.max(0, now.getTime() - Date.parse(ts)) / DAY_MS;
  return Math.pow(0.5, age / RECENCY_HALF_LIFE_DAYS);
}

/**
 * Fuses ranked lists by RRF (each list contributes 1 / (k + rank), rank from 1) and lifts each
 * fused score by recency. Returns keys best first (ties: newer first, then key).
 */
export function fuse<T extends Ranked>(lists: ReadonlyArray<readonly T[]>, now: Date): Array<T & { score: number }> {
  const acc = new Map<string, { item: T; rrf: number }>();
  for (const list of lists) {
    list.forEach((item, i) => {
      const prev = acc.get(item.key);
      const add = 1 / (RRF_K + i + 1);
      acc.set(item.key, { item: prev?.item ?? item, rrf: (prev?.rrf ?? 0) + add });
    });
  }
  return [...acc.values()]
    .map(({ item, rrf }) => ({ ...item, score: rrf * (1 + RECENCY_WEIGHT * recency(item.ts, now)) }))
    .sort((a, b) => b.score - a.score || Date.parse(b.ts) - Date.parse(a.ts) || a.key.localeCompare(b.key));
}

/**
 * One list alone (lexical search without semantic): its own scores (ts_rank_cd) lifted by
 * recency — rank fusion of a single list would throw away how much better a full match is.
 */
export function liftByRecency<T extends Ranked & { raw: number }>(
  list: readonly T[],
  now: Date,
): Array<T & { score: number }> {
  return list
    .map((item) => ({ ...item, score: item.raw * (1 + RECENCY_WEIGHT * recency(item.ts, now)) }))
    .sort((a, b) => b.score - a.score || Date.parse(b.ts) - Date.parse(a.ts) || a.key.localeCompare(b.key));
}

export interface TimeIntent {
  /** Turn index bounds (inclusive). */
  fromTurn?: number;
  toTurn?: number;
  /** Time bounds (ISO). */
  after?: string;
  before?: string;
  /** first / last: the earliest or latest matching entries. */
  order?: 'oldest' | 'newest';
  /** The query is only an ordinal / time phrase: list by time, no text match required. */
  onlyTime: boolean;
  /** The query with the phrases removed (what the text search uses). */
  rest: string;
}

const WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, ten: 10 };

function startOfDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

const FILLER =
  /\b(what|which|when|did|do|does|done|i|we|you|us|me|say|said|tell|told|ask|asked|talk|talked|discuss|discussed|mention|mentioned|in|the|a|an|my|our|your|message|messages|conversation|chat|about|was|were|is|on|from|of|there|anything)\b/g;

/** Reads ordinal and time phrases out of a query. */
export function timeIntent(query: string, now: Date): TimeIntent {
  let rest = ` ${query.toLowerCase()} `;
  const intent: Omit<TimeIntent, 'rest' | 'onlyTime'> = {};
  const take = (re: RegExp, fn: (m: RegExpExecArray) => void) => {
    const m = re.exec(rest);
    if (m) {
      fn(m);
      rest = rest.replace(m[0], ' ');
    }
  };
  take(/\bturn\s*#?\s*(\d+)\b/, (m) => {
    intent.fromTurn = Number(m[1]);
    intent.toTurn = Number(m[1]);
  });
  take(/\b(?:the\s+)?(?:very\s+)?(first|earliest|initial)\b(?:\s+(?:message|question|turn|thing|time))?/, () => {
    intent.order = 'oldest';
  });
  take(
    /\b(?:the\s+)?(last|latest|most recent|previous)\b(?:\s+(?:message|question|turn|answer|time))?(?!\s+(?:week|month|\d))/,
    () => {
      intent.order = 'newest';
    },
  );
  take(/\byesterday\b/, () => {
    const today = startOfDay(now);
    intent.after = new Date(today.getTime() - DAY_MS).toISOString();
    intent.before = today.toISOString();
  });
  take(/\btoday\b/, () => {
    intent.after = startOfDay(now).toISOString();
  });
  take(/\b(\d+|one|two|three|four|five|six|seven|ten)\s+(day|week)s?\s+ago\b/, (m) => {
    const n = /\d/.test(m[1]!) ? Number(m[1]) : WORDS[m[1]!]!;
    const span = m[2] === 'week' ? 7 * DAY_MS : DAY_MS;
    const day = startOfDay(new Date(now.getTime() - n * span));
    intent.after = day.toISOString();
    intent.before = new Date(day.getTime() + span).toISOString();
  });
  take(/\b(?:last|past|this)\s+(week|month)\b/, (m) => {
    intent.after = new Date(now.getTime() - (m[1] === 'week' ? 7 : 30) * DAY_MS).toISOString();
  });
  const cleaned = rest
    .replace(/[?!.,]/g, ' ')
    .replace(FILLER, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const found = Object.keys(intent).length > 0;
  // With a time or ordinal phrase, what remains of the question ("what did we talk about") is
  // filler: the text search gets only the words that carry meaning.
  return { ...intent, onlyTime: found && cleaned === '', rest: found ? cleaned : query };
}

/** A snippet around the first query term found (or the start), whole words, about `max` chars. */
export function snippet(text: string, query: string, max = 240): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const terms = query
    .toLowerCase()
    .split(/\W+/)
    .filter((t) => t.length > 2);
  const lower = flat.toLowerCase();
  const at =
    terms
      .map((t) => lower.indexOf(t))
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)[0] ?? 0;
  const start = Math.max(0, at - Math.floor(max / 3));
  const cut = flat.slice(start, start + max);
  return `${start > 0 ? '…' : ''}${cut}${start + max < flat.length ? '…' : ''}`;
}
