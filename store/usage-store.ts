/** Usage ledger rows: one per model call attempt key (idempotent). */
import type { Pool } from 'pg';
import type { Usage } from '../core/model/provider';

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
    `INSERT INTO usage_ledger (conversation_id, turn_id, round, call_key, provider, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, vcpu_seconds, gb_seconds)
     VALUES ($1, $2, $3, $4, $5, 0, 0, 0, 0, $6, $7, $8) ON CONFLICT (conversation_id, call_key) DO NOTHING`,
    [row.conversationId, row.turnId, row.round, `exec:${row.execId}`, row.backend, row.costUsd ?? null, row.vcpuSeconds, row.gbSeconds],
  );
}
