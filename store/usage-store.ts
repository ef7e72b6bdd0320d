/**
 * Usage ledger rows: one per model call attempt key (idempotent; an unfinished row is completed once).
 * A subagent conversation's row names the root conversation and turn it rolls up to too (from its
 * link, store/subagent-store.ts): the budgets above it count it (store/budget-store.ts).
 */
import type { Pool } from 'pg';
import type { Usage } from '../core/model/provider';

/** The root conversation and turn of conversation `$1`'s rows (NULL for a user's conversation). */
const ROOT_VALUES = `(SELECT root_conversation_id FROM subagent_delegations WHERE conversation_id = $1),
  (SELECT root_turn_id FROM subagent_delegations WHERE conversation_id = $1)`;

export interface UsageRow {
  conversationId: string;
  turnId: string;
  round: number;
  callKey: string;
  provider: string;
  model?: string;
  usage: Usage;
  costUsd?: number;
  /** What the call was for (`decision` by default; `compaction`, `title`, …). */
  purpose?: string;
  /** True while the call has not finished (recorded at its first usage report). */
  cut?: boolean;
  /** The provider's id for the call (Anthropic's `request-id`). */
  requestId?: string;
}

export async function recordUsage(pool: Pool, row: UsageRow): Promise<void> {
  await pool.query(
    `INSERT INTO usage_ledger (conversation_id, turn_id, round, call_key, provider, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, purpose, cut, request_id, root_conversation_id, root_turn_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${ROOT_VALUES})
     ON CONFLICT (conversation_id, call_key) DO UPDATE
       SET input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, cache_read_tokens = EXCLUDED.cache_read_tokens,
           cache_write_tokens = EXCLUDED.cache_write_tokens, cost_usd = EXCLUDED.cost_usd, cut = EXCLUDED.cut,
           request_id = COALESCE(EXCLUDED.request_id, usage_ledger.request_id)
       WHERE usage_ledger.cut AND NOT EXCLUDED.cut`,
    [
      row.conversationId,
      row.turnId,
      row.round,
      row.callKey,
      row.provider,
      row.model ?? null,
      row.usage.inputTokens,
      row.usage.outputTokens,
      row.usage.cacheReadTokens,
      row.usage.cacheWriteTokens,
      row.costUsd ?? null,
      row.purpose ?? 'decision',
      row.cut ?? false,
      row.requestId ?? null,
    ],
  );
}

/** A conversation's ledger totals by purpose (decision, compaction, …). */
export async function usageByPurpose(
  pool: Pool,
  conversationId: string,
): Promise<
  Array<{
    purpose: string;
    costUsd: number;
    inputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    outputTokens: number;
    calls: number;
  }>
> {
  const res = await pool.query<{
    purpose: string;
    cost: number | null;
    input: number;
    read: number;
    write: number;
    output: number;
    calls: number;
  }>(
    `SELECT purpose, sum(cost_usd)::float AS cost, sum(input_tokens)::int AS input, sum(cache_read_tokens)::int AS read,
            sum(cache_write_tokens)::int AS write, sum(output_tokens)::int AS output, count(*)::int AS calls
       FROM usage_ledger WHERE conversation_id = $1 GROUP BY purpose ORDER BY purpose`,
    [conversationId],
  );
  return res.rows.map((r) => ({
    purpose: r.purpose,
    costUsd: r.cost ?? 0,
    inputTokens: r.input,
    cacheReadTokens: r.read,
    cacheWriteTokens: r.write,
    outputTokens: r.output,
    calls: r.calls,
  }));
}

/** One exec's sandbox usage (e.g. a Fargate task's billed vCPU- and GB-seconds), keyed `exec:<execId>`. */
export interface ExecUsageRow {
  conversationId: string;
  turnId: string;
  round: number;
  execId: string;
  /** The exec backend (`fargate`, `docker`, `local`). */
  backend: string;
  vcpuSeconds: number;
  gbSeconds: number;
  costUsd?: number;
}

export async function recordExecUsage(pool: Pool, row: ExecUsageRow): Promise<void> {
  await pool.query(
    `INSERT INTO usage_ledger (conversation_id, turn_id, round, call_key, provider, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, vcpu_seconds, gb_seconds, purpose, root_conversation_id, root_turn_id)
     VALUES ($1, $2, $3, $4, $5, 0, 0, 0, 0, $6, $7, $8, 'exec', ${ROOT_VALUES}) ON CONFLICT (conversation_id, call_key) DO NOTHING`,
    [
      row.conversationId,
      row.turnId,
      row.round,
      `exec:${row.execId}`,
      row.backend,
      row.costUsd ?? null,
      row.vcpuSeconds,
      row.gbSeconds,
    ],
  );
}

/** Every ledger row of the schema (purpose and whether the call was cut): for audits like the chaos suite. */
export async function usageRows(
  pool: Pool,
): Promise<Array<{ callKey: string; purpose: string; cut: boolean; requestId: string | null }>> {
  const res = await pool.query<{ call_key: string; purpose: string; cut: boolean; request_id: string | null }>(
    `SELECT call_key, purpose, cut, request_id FROM usage_ledger ORDER BY created_at, call_key`,
  );
  return res.rows.map((r) => ({ callKey: r.call_key, purpose: r.purpose, cut: r.cut, requestId: r.request_id }));
}
