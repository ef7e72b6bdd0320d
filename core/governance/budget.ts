/**
 * Spend caps (issue 30): budgets in USD per tenant, project, user and conversation, per day and per
 * month (UTC), and per turn from the agent definition (`limits.spend_usd_per_turn`). Pure.
 *
 * Every model call reserves its worst case first — the request's estimated input tokens priced at
 * the model's dearest input rate (cache writes) plus `max_tokens` at its output rate — atomically
 * in Postgres against every budget that covers it (store/budget-store.ts). A call that would take a
 * budget over its cap is refused. Spent money is the usage ledger's; a reservation is released when
 * its call ends (its ledger row then counts) or when it expires. So concurrent turns overshoot a cap
 * by at most what calls already reserved — never by a burst of calls that all checked before any
 * was counted.
 */
import { priceFor, type PriceTable, DEFAULT_PRICE_TABLE } from '../model/pricing';

export const BUDGET_SCOPES = ['tenant', 'project', 'user', 'conversation'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export const BUDGET_PERIODS = ['day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** A stored budget: `scopeId` is '' for the tenant, else the project, user or conversation id. */
export interface SpendBudget {
  tenantId: string;
  scope: BudgetScope;
  scopeId: string;
  period: BudgetPeriod;
  capUsd: number;
}

/** A budget with what is spent (ledger) and reserved (calls in flight) in its current period. */
export interface BudgetUse {
  /** e.g. `tenant acme, per day`, `turn turn_3 of c_1`. */
  label: string;
  capUsd: number;
  spentUsd: number;
  reservedUsd: number;
}

/** The share of a cap at which a turn's stream warns (`budget` event, phase `warning`). */
export const WARN_RATIO = 0.8;
/** Failure type / error name of a model call a budget refused. */
export const BUDGET_EXCEEDED = 'BudgetExceeded';

export function budgetLabel(b: Pick<SpendBudget, 'tenantId' | 'scope' | 'scopeId' | 'period'>): string {
  const who = b.scope === 'tenant' ? `tenant ${b.tenantId}` : `${b.scope} ${b.scopeId} of tenant ${b.tenantId}`;
  return `${who}, per ${b.period}`;
}

export const turnBudgetLabel = (turnId: string, conversationId: string) =>
  `turn ${turnId} of ${conversationId} (the agent's limits.spend_usd_per_turn)`;

/** The price of a model, or undefined when the table has none (such calls cost nothing in the ledger either). */
function price(model: string | undefined, provider: string | undefined, table: PriceTable) {
  if (!model) return undefined;
  for (const p of [provider?.split(':')[0], 'anthropic']) {
    try {
      return priceFor(model, table, p);
    } catch {
      // next
    }
  }
  return undefined;
}

/** The most a call can cost: every input token at the dearest input rate, plus max_tokens of output. */
export function worstCaseUsd(
  inputTokens: number,
  maxTokens: number,
  model: string | undefined,
  provider?: string,
  table: PriceTable = DEFAULT_PRICE_TABLE,
): number {
  const p = price(model, provider, table);
  if (!p) return 0;
  const inputRate = Math.max(p.inputPerMTok, p.cacheWritePerMTok);
  return (inputTokens * inputRate + maxTokens * p.outputPerMTok) / 1e6;
}

/** The answer of a turn a budget stopped (shown in the CLI, the gateway and the web chat). */
export function budgetExceededAnswer(use: Pick<BudgetUse, 'label' | 'capUsd' | 'spentUsd' | 'reservedUsd'>): string {
  return (
    `This turn stopped: the spend cap of ${use.label} (${use.capUsd.toFixed(2)} USD) would be exceeded ` +
    `(${use.spentUsd.toFixed(4)} USD spent, ${use.reservedUsd.toFixed(4)} USD reserved by calls in flight). ` +
    `Raise the budget (dreact budget set) or wait for the next period.`
  );
}

/** Error of a model call a budget refused; `use` names the budget. */
export class BudgetExceededError extends Error {
  constructor(readonly use: BudgetUse) {
    super(
      `budget_exceeded: ${use.label}: cap ${use.capUsd} USD, spent ${use.spentUsd.toFixed(6)}, reserved ${use.reservedUsd.toFixed(6)}`,
    );
    this.name = BUDGET_EXCEEDED;
  }
}

/** The BudgetExceededError in an error's cause chain. */
export function budgetExceededIn(err: unknown): BudgetExceededError | undefined {
  for (let e: unknown = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof BudgetExceededError) return e;
  }
  return undefined;
}
