/** Usage ledger rows: one per model call attempt key (idempotent). */
import type { Pool } from 'pg';
import type { Usage } from '../../core/model/provider';

export interface UsageRow {
  conversationId: string;
  turnId: string;
  round: number;
  callKey: string;
  provider: string;
  model?: string;
  usage: Usage;
  costUsd?: number;
}

export async function recordUsage(pool: Pool, row: UsageRow): Promise<void> {
  await pool.query(
    `INSERT INTO usage_ledger (conversation_id, turn_id, round, call_key, provider, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (conversation_id, call_key) DO NOTHING`,
    [row.conversationId, row.turnId, row.round, row.callKey, row.provider, row.model ?? null, row.usage.inputTokens, row.usage.outputTokens, row.usage.cacheReadTokens, row.usage.cacheWriteTokens, row.costUsd ?? null],
  );
}

export async function turnUsage(pool: Pool, conversationId: string, turnId: string): Promise<Usage & { calls: number }> {
  const res = await pool.query(
    `SELECT count(*)::int AS calls, coalesce(sum(input_tokens),0)::int AS i, coalesce(sum(output_tokens),0)::int AS o,
            coalesce(sum(cache_read_tokens),0)::int AS r, coalesce(sum(cache_write_tokens),0)::int AS w
       FROM usage_ledger WHERE conversation_id = $1 AND turn_id = $2`,
    [conversationId, turnId],
  );
  const r = res.rows[0];
  return { calls: r.calls, inputTokens: r.i, outputTokens: r.o, cacheReadTokens: r.r, cacheWriteTokens: r.w };
}
