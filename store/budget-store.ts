/**
 * Spend budgets and the reservations model calls take against them (core/governance/budget.ts).
 *
 * `reserveSpend` is one transaction: it locks the budget rows that cover the call (FOR UPDATE, in
 * a fixed order) and the per-turn caps over it (advisory locks, root turn first), then sums — in the
 * same transaction, after the locks, so it sees every reservation committed before it — what the
 * ledger says was spent in each budget's period and what unexpired reservations hold, and inserts
 * the call's reservation only when every budget stays within its cap. Concurrent calls of one tenant
 * therefore queue on the row lock for a few milliseconds and never both take the last dollar.
 * Expired reservations (a killed worker's) are deleted by the next reservation of the tenant and
 * never count. Reserving again under the same key (a fallback chain moving to another model)
 * replaces the call's reservation, checked without its old amount.
 *
 * A subagent's call (core/governance/spend-rollup.ts) is covered by what covers the turns above it:
 * a conversation budget covers the conversation and every subagent conversation below it
 * (`<id>:sub:…`), and the per-turn caps of every turn above the call (its link's `turn_caps`)
 * count it — a turn's spend is its own calls' and its subagents' at any depth. Its ledger rows and
 * reservations name the root conversation and turn (`root_conversation_id`, `root_turn_id`).
 */
import type { Pool } from 'pg';
import type { Queryable } from './db';
import {
  budgetLabel,
  turnBudgetLabel,
  WARN_RATIO,
  type BudgetPeriod,
  type BudgetScope,
  type BudgetUse,
  type SpendBudget,
} from '../core/governance/budget';
import type { TurnCap } from '../core/governance/spend-rollup';
import { loadSpendLink, withSubagents } from './subagent-store';

export interface SpendOwner {
  tenantId: string;
  projectId: string;
  userId: string | null;
}

export interface ReserveInput {
  conversationId: string;
  turnId: string;
  callKey: string;
  owner: SpendOwner;
  amountUsd: number;
  ttlSeconds: number;
  /** The turn's own cap (the agent's limits.spend_usd_per_turn). */
  turnCapUsd?: number;
}

export type ReserveResult = { ok: true; warnings: BudgetUse[] } | { ok: false; refused: BudgetUse };

/**
 * The condition "budget row `b` covers the call": SQL expressions for the tenant, project, user ('' for
 * none) and conversation. A conversation budget covers its subagents' conversations too.
 */
export const coversSql = (tenant: string, project: string, user: string, conversation: string) => `
  b.tenant_id = ${tenant} AND (
    (b.scope = 'tenant' AND b.scope_id = '') OR (b.scope = 'project' AND b.scope_id = ${project}) OR
    (b.scope = 'user' AND b.scope_id = ${user}) OR
    (b.scope = 'conversation' AND ${withSubagents(conversation, 'b.scope_id')}))`;

const COVERS = coversSql('$1', '$2', '$3', '$4');

/** A subagent conversation `conversation` (SQL) inherits a per-turn cap from the turns above it. */
const inheritsTurnCapSql = (conversation: string) =>
  `EXISTS (SELECT 1 FROM subagent_delegations d WHERE d.conversation_id = ${conversation} AND d.turn_caps <> '[]'::jsonb)`;

/**
 * Whether any budget or a turn above covers a conversation's calls, as a column of a statement on
 * its `conversations` row (aliased `c`): a round reads it beside its view (store/round-reads.ts), so
 * a tenant without budgets takes no reservation (activities/model/middleware/spend.ts).
 */
export const BUDGETED_COLUMN_SQL = `(EXISTS (SELECT 1 FROM spend_budgets b WHERE ${coversSql(
  'c.tenant_id',
  'c.project_id',
  "coalesce(c.user_id, '')",
  'c.id',
)}) OR ${inheritsTurnCapSql('c.id')})`;

/** Whether any budget or a turn above covers the owner's calls in the conversation (one statement; throws when unreadable). */
export async function budgetsCover(db: Queryable, owner: SpendOwner, conversationId: string): Promise<boolean> {
  const res = await db.query<{ covered: boolean }>(
    `SELECT (EXISTS (SELECT 1 FROM spend_budgets b WHERE ${COVERS}) OR ${inheritsTurnCapSql('$4')}) AS covered`,
    [owner.tenantId, owner.projectId, owner.userId ?? '', conversationId],
  );
  return res.rows[0]!.covered;
}

/** Spent (ledger) and reserved (unexpired reservations) in each budget's current period. */
const USE_SQL = `
  SELECT b.tenant_id, b.scope, b.scope_id, b.period, b.cap_usd,
    (SELECT coalesce(sum(l.cost_usd), 0) FROM usage_ledger l JOIN conversations c ON c.id = l.conversation_id
      WHERE c.tenant_id = b.tenant_id
        AND l.created_at >= date_trunc(b.period, now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        AND CASE b.scope WHEN 'tenant' THEN true WHEN 'project' THEN c.project_id = b.scope_id
                         WHEN 'user' THEN c.user_id = b.scope_id
                         ELSE ${withSubagents('c.id', 'b.scope_id')} END)::float AS spent,
    (SELECT coalesce(sum(r.amount_usd), 0) FROM spend_reservations r
      WHERE r.tenant_id = b.tenant_id AND r.expires_at >= now()
        AND CASE b.scope WHEN 'tenant' THEN true WHEN 'project' THEN r.project_id = b.scope_id
                         WHEN 'user' THEN r.user_id = b.scope_id
                         ELSE ${withSubagents('r.conversation_id', 'b.scope_id')} END)::float AS reserved
  FROM spend_budgets b`;

/**
 * A row (`x`, of the ledger or the reservations) counts against turn ($1 conversation, $2 turn) of
 * the tree rooted at $3: the turn's own calls, and its subagents' at any depth.
 */
const inTurnSql = (x: string) => `((${x}.conversation_id = $1 AND ${x}.turn_id = $2) OR
  (${x}.root_conversation_id = $3 AND EXISTS (SELECT 1 FROM subagent_delegations d
    WHERE d.parent_conversation_id = $1 AND d.parent_turn_id = $2 AND ${withSubagents(`${x}.conversation_id`, 'd.conversation_id')})))`;

const TURN_USE_SQL = `
  SELECT (SELECT coalesce(sum(l.cost_usd), 0) FROM usage_ledger l WHERE ${inTurnSql('l')})::float AS spent,
         (SELECT coalesce(sum(r.amount_usd), 0) FROM spend_reservations r
           WHERE r.expires_at >= now() AND ${inTurnSql('r')})::float AS reserved`;

type UseRow = {
  tenant_id: string;
  scope: BudgetScope;
  scope_id: string;
  period: BudgetPeriod;
  cap_usd: number;
  spent: number;
  reserved: number;
};

const useOf = (r: UseRow): BudgetUse & { budget: SpendBudget } => ({
  label: budgetLabel({ tenantId: r.tenant_id, scope: r.scope, scopeId: r.scope_id, period: r.period }),
  capUsd: r.cap_usd,
  spentUsd: r.spent,
  reservedUsd: r.reserved,
  budget: { tenantId: r.tenant_id, scope: r.scope, scopeId: r.scope_id, period: r.period, capUsd: r.cap_usd },
});

export async function reserveSpend(pool: Pool, input: ReserveInput): Promise<ReserveResult> {
  const { owner, conversationId, turnId, amountUsd } = input;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`DELETE FROM spend_reservations WHERE tenant_id = $1 AND expires_at < now()`, [owner.tenantId]);
    // A subagent's call: the turns above it and the root it rolls up to (read first: it never changes).
    const link = await loadSpendLink(client, conversationId);
    const root = { conversationId: link?.rootConversationId ?? conversationId, turnId: link?.rootTurnId ?? turnId };
    const args = [owner.tenantId, owner.projectId, owner.userId ?? '', conversationId];
    const locked = await client.query(
      `SELECT 1 FROM spend_budgets b WHERE ${COVERS} ORDER BY scope, scope_id, period FOR UPDATE`,
      args,
    );
    // Every per-turn cap over the call, root first (one order for every call: no deadlock).
    const turnCaps: TurnCap[] = [
      ...(link?.turnCaps ?? []),
      ...(input.turnCapUsd !== undefined ? [{ conversationId, turnId, capUsd: input.turnCapUsd }] : []),
    ];
    for (const cap of turnCaps)
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [
        `turn-spend:${cap.conversationId}/${cap.turnId}`,
      ]);
    // Reserving again (a fallback's other price) replaces the call's reservation: counted without it.
    await client.query(`DELETE FROM spend_reservations WHERE conversation_id = $1 AND call_key = $2`, [
      conversationId,
      input.callKey,
    ]);
    const uses: BudgetUse[] = [];
    if ((locked.rowCount ?? 0) > 0) {
      const res = await client.query<UseRow>(`${USE_SQL} WHERE ${COVERS}`, args);
      uses.push(...res.rows.map(useOf));
    }
    for (const cap of turnCaps) {
      const res = await client.query<{ spent: number; reserved: number }>(TURN_USE_SQL, [
        cap.conversationId,
        cap.turnId,
        root.conversationId,
      ]);
      uses.push({
        label: turnBudgetLabel(cap.turnId, cap.conversationId),
        capUsd: cap.capUsd,
        spentUsd: res.rows[0]!.spent,
        reservedUsd: res.rows[0]!.reserved,
      });
    }
    const refused = uses.find((u) => u.spentUsd + u.reservedUsd + amountUsd > u.capUsd);
    if (refused) {
      await client.query('ROLLBACK');
      return { ok: false, refused };
    }
    await client.query(
      `INSERT INTO spend_reservations (conversation_id, call_key, turn_id, tenant_id, project_id, user_id, amount_usd, expires_at,
                                       root_conversation_id, root_turn_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8), $9, $10)
       ON CONFLICT (conversation_id, call_key) DO UPDATE SET amount_usd = EXCLUDED.amount_usd, expires_at = EXCLUDED.expires_at`,
      [
        conversationId,
        input.callKey,
        turnId,
        owner.tenantId,
        owner.projectId,
        owner.userId,
        amountUsd,
        input.ttlSeconds,
        link ? root.conversationId : null,
        link ? root.turnId : null,
      ],
    );
    await client.query('COMMIT');
    const warnings = uses.filter(
      (u) => u.capUsd > 0 && (u.spentUsd + u.reservedUsd + amountUsd) / u.capUsd >= WARN_RATIO,
    );
    return { ok: true, warnings };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Releases a call's reservation (its ledger row counts from now on). */
export async function releaseSpend(db: Queryable, conversationId: string, callKey: string): Promise<void> {
  await db.query(`DELETE FROM spend_reservations WHERE conversation_id = $1 AND call_key = $2`, [
    conversationId,
    callKey,
  ]);
}

/** Sets a budget (cap in USD); a negative cap is refused by the table. */
export async function setBudget(db: Queryable, b: SpendBudget): Promise<void> {
  await db.query(
    `INSERT INTO spend_budgets (tenant_id, scope, scope_id, period, cap_usd) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, scope, scope_id, period) DO UPDATE SET cap_usd = EXCLUDED.cap_usd, updated_at = now()`,
    [b.tenantId, b.scope, b.scopeId, b.period, b.capUsd],
  );
}

export async function deleteBudget(db: Queryable, b: Omit<SpendBudget, 'capUsd'>): Promise<boolean> {
  const res = await db.query(
    `DELETE FROM spend_budgets WHERE tenant_id = $1 AND scope = $2 AND scope_id = $3 AND period = $4`,
    [b.tenantId, b.scope, b.scopeId, b.period],
  );
  return (res.rowCount ?? 0) > 0;
}

/** A tenant's budgets with what each has spent and reserved now. */
export async function budgetUses(db: Queryable, tenantId: string): Promise<Array<BudgetUse & { budget: SpendBudget }>> {
  const res = await db.query<UseRow>(`${USE_SQL} WHERE b.tenant_id = $1 ORDER BY b.scope, b.scope_id, b.period`, [
    tenantId,
  ]);
  return res.rows.map(useOf);
}

/** Money unexpired reservations of a tenant (optionally one conversation and its subagents') hold now. */
export async function reservedSpend(db: Queryable, tenantId: string, conversationId?: string): Promise<number> {
  const res = await db.query<{ reserved: number }>(
    `SELECT coalesce(sum(amount_usd), 0)::float AS reserved FROM spend_reservations
      WHERE tenant_id = $1 AND expires_at >= now() AND ($2::text IS NULL OR ${withSubagents('conversation_id', '$2::text')})`,
    [tenantId, conversationId ?? null],
  );
  return res.rows[0]!.reserved;
}
