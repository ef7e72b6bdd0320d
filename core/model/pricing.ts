/**
 * Usage ledger and cost estimation (pure; safe for workflows).
 *
 * Prices are USD per million tokens. Cache writes (5-minute TTL) cost 1.25× input and cache reads
 * 0.1× input unless a price entry says otherwise. The table is configurable: pass your own to
 * every function, extend DEFAULT_PRICE_TABLE, or give the worker a pricing file
 * (DREACT_PRICING_FILE, parsed by `parsePriceTable`).
 *
 * Keys are qualified by provider (`openai:gpt-4o`); an unqualified key is an Anthropic model (the
 * table's first provider, kept for existing tables). A lookup for (provider, model) tries the
 * qualified key exactly, then the longest qualified key that prefixes the id (so
 * `claude-sonnet-5-5-20261001` finds `claude-sonnet-5-5`); for Anthropic also the unqualified keys,
 * then the family (`opus` / `sonnet` / `haiku` in the id).
 */
import { z } from 'zod';
import { addUsage, ZERO_USAGE, type Usage } from './provider';

export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Default 1.25 × input (5-minute cache writes). */
  cacheWritePerMTok?: number;
  /** One-hour cache writes (Anthropic `ttl: '1h'`); default 2 × input. */
  cacheWrite1hPerMTok?: number;
  /** Default 0.1 × input. */
  cacheReadPerMTok?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Public list prices as known to this project. Entries for 5.x models are assumptions (same tier
 * prices as their 4.5 predecessors); override them when real prices are known.
 */
export const DEFAULT_PRICE_TABLE: PriceTable = Object.freeze({
  'claude-opus-4-0': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-20250514': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-5': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-opus-4-6': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-sonnet-4-6': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-sonnet-5-5': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-opus-5-5': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-haiku-5-5': { inputPerMTok: 1, outputPerMTok: 5 },
  /** Family fallbacks. */
  opus: { inputPerMTok: 5, outputPerMTok: 25 },
  sonnet: { inputPerMTok: 3, outputPerMTok: 15 },
  haiku: { inputPerMTok: 1, outputPerMTok: 5 },
  /** OpenAI list prices; automatic caching: no write surcharge, cached input at the model's discount. */
  'openai:gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cacheWritePerMTok: 2.5, cacheReadPerMTok: 1.25 },
  'openai:gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheWritePerMTok: 0.15, cacheReadPerMTok: 0.075 },
  'openai:gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8, cacheWritePerMTok: 2, cacheReadPerMTok: 0.5 },
  'openai:gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheWritePerMTok: 0.4, cacheReadPerMTok: 0.1 },
  'openai:gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cacheWritePerMTok: 1.25, cacheReadPerMTok: 0.125 },
  'openai:gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cacheWritePerMTok: 0.25, cacheReadPerMTok: 0.025 },
  'openai:deepseek-chat': { inputPerMTok: 0.27, outputPerMTok: 1.1, cacheWritePerMTok: 0.27, cacheReadPerMTok: 0.07 },
  'openai:deepseek-reasoner': {
    inputPerMTok: 0.55,
    outputPerMTok: 2.19,
    cacheWritePerMTok: 0.55,
    cacheReadPerMTok: 0.14,
  },
});

const longestPrefix = (keys: string[], id: string): string | undefined =>
  keys.filter((k) => id.startsWith(k)).sort((a, b) => b.length - a.length)[0];

/** A model's price entry, or undefined when the table has nothing for it (`provider` defaults to anthropic). */
function findPrice(model: string, table: PriceTable, provider: string): ModelPrice | undefined {
  const prefix = `${provider}:`;
  const qualified = Object.keys(table).filter((k) => k.startsWith(prefix));
  let p: ModelPrice | undefined = table[`${prefix}${model}`];
  if (!p) {
    const key = longestPrefix(qualified, `${prefix}${model}`);
    if (key) p = table[key];
  }
  if (!p && provider === 'anthropic') {
    p = table[model];
    if (!p) {
      const key = longestPrefix(
        Object.keys(table).filter((k) => !k.includes(':')),
        model,
      );
      if (key) p = table[key];
    }
    if (!p) {
      const family = ['opus', 'sonnet', 'haiku'].find((f) => model.includes(f));
      if (family) p = table[family];
    }
  }
  return p;
}

/**
 * Resolves a model's price (`provider` defaults to anthropic, whose keys need no qualifier);
 * throws a clear Error when the table has nothing for it.
 */
export function priceFor(
  model: string,
  table: PriceTable = DEFAULT_PRICE_TABLE,
  provider = 'anthropic',
): Required<ModelPrice> {
  const p = findPrice(model, table, provider);
  if (!p)
    throw new Error(
      `no price for model "${model}" of provider ${provider} (known: ${Object.keys(table).join(', ')}); pass a price table that covers it (DREACT_PRICING_FILE)`,
    );
  return {
    inputPerMTok: p.inputPerMTok,
    outputPerMTok: p.outputPerMTok,
    cacheWritePerMTok: p.cacheWritePerMTok ?? p.inputPerMTok * 1.25,
    cacheWrite1hPerMTok: p.cacheWrite1hPerMTok ?? p.inputPerMTok * 2,
    cacheReadPerMTok: p.cacheReadPerMTok ?? p.inputPerMTok * 0.1,
  };
}

export interface CostBreakdown {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  total: number;
}

/** Estimated cost in USD of one usage record. */
export function estimateCost(
  usage: Usage,
  model: string,
  table: PriceTable = DEFAULT_PRICE_TABLE,
  provider?: string,
): CostBreakdown {
  const p = priceFor(model, table, provider);
  const input = (usage.inputTokens * p.inputPerMTok) / 1e6;
  const output = (usage.outputTokens * p.outputPerMTok) / 1e6;
  const hour = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  const cacheWrite = ((usage.cacheWriteTokens - hour) * p.cacheWritePerMTok + hour * p.cacheWrite1hPerMTok) / 1e6;
  const cacheRead = (usage.cacheReadTokens * p.cacheReadPerMTok) / 1e6;
  return { input, output, cacheWrite, cacheRead, total: input + output + cacheWrite + cacheRead };
}

/** The estimated cost in USD, or undefined for a model the table does not price (e.g. a span attribute). */
export function costIfPriced(
  usage: Usage,
  model: string,
  table: PriceTable = DEFAULT_PRICE_TABLE,
  provider = 'anthropic',
): number | undefined {
  return findPrice(model, table, provider) ? estimateCost(usage, model, table, provider).total : undefined;
}

/** What the same usage would cost with no caching (every prompt token billed as plain input). */
export function costWithoutCache(
  usage: Usage,
  model: string,
  table: PriceTable = DEFAULT_PRICE_TABLE,
  provider?: string,
): number {
  const p = priceFor(model, table, provider);
  return (
    ((usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens) * p.inputPerMTok +
      usage.outputTokens * p.outputPerMTok) /
    1e6
  );
}

/** Total prompt tokens: uncached input + cache reads + cache writes. */
export function promptTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** cacheRead / (input + cacheRead + cacheWrite); 0 when there were no prompt tokens. */
export function cacheReadRatio(usage: Usage): number {
  const total = promptTokens(usage);
  return total === 0 ? 0 : usage.cacheReadTokens / total;
}

export interface RoundUsage {
  turnId: string;
  round: number;
  model: string;
  /** The model's provider (default anthropic): prices are keyed by provider. */
  provider?: string;
  usage: Usage;
}

export interface UsageTotals {
  usage: Usage;
  cost: number;
  costWithoutCache: number;
  cacheReadRatio: number;
  rounds: number;
}

/** An append-only list of per-round usage records; functions return new ledgers. */
export interface UsageLedger {
  readonly rounds: readonly RoundUsage[];
}

export const EMPTY_LEDGER: UsageLedger = Object.freeze({ rounds: Object.freeze([]) as readonly RoundUsage[] });

function checkUsage(u: Usage, where: string): void {
  for (const k of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const) {
    const v = u[k];
    if (!Number.isInteger(v) || v < 0)
      throw new Error(`${where}: usage.${k} must be a non-negative integer (got ${String(v)})`);
  }
}

/**
 * Records a round's usage. Recording the same (turnId, round) again adds to it (a round may span
 * several model calls, e.g. a structured-output fallback chain).
 */
export function recordRound(ledger: UsageLedger, entry: RoundUsage): UsageLedger {
  checkUsage(entry.usage, `round ${entry.turnId}#${entry.round}`);
  const i = ledger.rounds.findIndex(
    (r) =>
      r.turnId === entry.turnId && r.round === entry.round && r.model === entry.model && r.provider === entry.provider,
  );
  if (i < 0) return { rounds: [...ledger.rounds, { ...entry, usage: { ...entry.usage } }] };
  const rounds = ledger.rounds.slice();
  const prev = rounds[i]!;
  rounds[i] = { ...prev, usage: addUsage(prev.usage, entry.usage) };
  return { rounds };
}

export function totalsOf(rounds: readonly RoundUsage[], table: PriceTable = DEFAULT_PRICE_TABLE): UsageTotals {
  let usage: Usage = ZERO_USAGE;
  let cost = 0;
  let noCache = 0;
  for (const r of rounds) {
    usage = addUsage(usage, r.usage);
    cost += estimateCost(r.usage, r.model, table, r.provider).total;
    noCache += costWithoutCache(r.usage, r.model, table, r.provider);
  }
  return { usage, cost, costWithoutCache: noCache, cacheReadRatio: cacheReadRatio(usage), rounds: rounds.length };
}

export function roundTotals(
  ledger: UsageLedger,
  turnId: string,
  round: number,
  table: PriceTable = DEFAULT_PRICE_TABLE,
): UsageTotals {
  return totalsOf(
    ledger.rounds.filter((r) => r.turnId === turnId && r.round === round),
    table,
  );
}

export function turnTotals(ledger: UsageLedger, turnId: string, table: PriceTable = DEFAULT_PRICE_TABLE): UsageTotals {
  return totalsOf(
    ledger.rounds.filter((r) => r.turnId === turnId),
    table,
  );
}

export function ledgerTotals(ledger: UsageLedger, table: PriceTable = DEFAULT_PRICE_TABLE): UsageTotals {
  return totalsOf(ledger.rounds, table);
}

/** Totals per turn, in first-seen order. */
export function totalsByTurn(
  ledger: UsageLedger,
  table: PriceTable = DEFAULT_PRICE_TABLE,
): Array<{ turnId: string } & UsageTotals> {
  const order: string[] = [];
  for (const r of ledger.rounds) if (!order.includes(r.turnId)) order.push(r.turnId);
  return order.map((turnId) => ({ turnId, ...turnTotals(ledger, turnId, table) }));
}

/** A pricing file's shape: `{ "<provider>:<model>": {inputPerMTok, outputPerMTok, …} }`, per 1M tokens. */
const PriceSchema = z.strictObject({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  cacheWritePerMTok: z.number().nonnegative().optional(),
  cacheWrite1hPerMTok: z.number().nonnegative().optional(),
  cacheReadPerMTok: z.number().nonnegative().optional(),
});
const PriceFileSchema = z.record(
  z
    .string()
    .regex(/^([a-z][a-z0-9_-]*:)?[^\s:][^\s]*$/, 'a price key is <provider>:<model> (or an Anthropic model id)'),
  PriceSchema,
);

/**
 * A pricing file's entries over `base` (DEFAULT_PRICE_TABLE): the file adds models and replaces
 * the prices it names. `where` names the file in errors.
 */
export function parsePriceTable(value: unknown, where: string, base: PriceTable = DEFAULT_PRICE_TABLE): PriceTable {
  const r = PriceFileSchema.safeParse(value);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`pricing file ${where}: ${issues}`);
  }
  return Object.freeze({ ...base, ...r.data });
}
