/**
 * The conversations API's reads and writes, always bound to a tenant scope: pages of a tenant's
 * conversations (newest activity first, keyset cursor; `q` narrows them to titles or ids holding
 * the text, case-insensitive, over all of the tenant's conversations), one conversation's summary, rename, and
 * usage and cost per conversation and per tenant and day.
 */
import type { Queryable } from './db';
import { withSubagents } from './subagent-store';
import type { ConversationOwner } from './tenancy-store';

export interface ConversationSummary {
  id: string;
  title: string | null;
  createdAt: string;
  lastActivity: string;
  turnCount: number;
  /** idle (no turn, or the last one finished), running, or failed (the last turn failed). */
  status: 'idle' | 'running' | 'failed';
  userId: string | null;
}

const SUMMARY = `
  SELECT c.id, c.title, c.created_at, c.user_id,
         greatest(c.updated_at, coalesce(t.last_at, c.created_at)) AS last_activity,
         coalesce(t.n, 0)::int AS turn_count, t.last_status
    FROM conversations c
    LEFT JOIN LATERAL (
      SELECT count(*) AS n, max(greatest(started_at, coalesce(finished_at, started_at))) AS last_at,
             (SELECT status FROM turns l WHERE l.conversation_id = c.id ORDER BY turn_index DESC LIMIT 1) AS last_status
        FROM turns WHERE conversation_id = c.id
    ) t ON true`;

function summary(r: Record<string, unknown>): ConversationSummary {
  const last = r.last_status as string | null;
  return {
    id: r.id as string,
    title: (r.title as string | null) ?? null,
    createdAt: (r.created_at as Date).toISOString(),
    lastActivity: (r.last_activity as Date).toISOString(),
    turnCount: r.turn_count as number,
    status: last === 'running' ? 'running' : last === 'failed' ? 'failed' : 'idle',
    userId: (r.user_id as string | null) ?? null,
  };
}

/** `scope.userId` null: every conversation of the project; else that user's. */
const scoped = (first: number) =>
  `c.tenant_id = $${first} AND c.project_id = $${first + 1} AND ($${first + 2}::text IS NULL OR c.user_id = $${first + 2})`;

export async function listConversations(
  db: Queryable,
  scope: ConversationOwner,
  page: { limit: number; after?: { lastActivity: string; id: string }; q?: string },
): Promise<ConversationSummary[]> {
  const res = await db.query(
    // Subagent conversations (`<parent>:sub:<call>`) are reached through their parent's call, not listed.
    // A search matches the title or the id as its owner names it (after the id space's last `~`);
    // strpos, not LIKE: the text is matched as it is (no wildcards).
    `SELECT * FROM (${SUMMARY} WHERE ${scoped(1)} AND strpos(c.id, ':sub:') = 0
        AND ($7::text IS NULL
             OR strpos(lower(coalesce(c.title, '')), lower($7)) > 0
             OR strpos(lower(regexp_replace(c.id, '^.*~', '')), lower($7)) > 0)) s
      WHERE ($4::timestamptz IS NULL OR (s.last_activity, s.id) < ($4::timestamptz, $5::text))
      ORDER BY s.last_activity DESC, s.id DESC
      LIMIT $6`,
    [
      scope.tenantId,
      scope.projectId,
      scope.userId,
      page.after?.lastActivity ?? null,
      page.after?.id ?? '',
      page.limit,
      page.q ?? null,
    ],
  );
  return res.rows.map(summary);
}

export async function conversationSummary(db: Queryable, id: string): Promise<ConversationSummary | undefined> {
  const res = await db.query(`${SUMMARY} WHERE c.id = $1`, [id]);
  return res.rows[0] ? summary(res.rows[0]) : undefined;
}

export async function renameConversation(db: Queryable, id: string, title: string): Promise<void> {
  await db.query(`UPDATE conversations SET title = $2, updated_at = now() WHERE id = $1`, [id, title]);
}

export interface UsageTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

const TOTALS = `count(*)::int AS calls, coalesce(sum(input_tokens), 0)::bigint AS input,
  coalesce(sum(output_tokens), 0)::bigint AS output, coalesce(sum(cache_read_tokens), 0)::bigint AS read,
  coalesce(sum(cache_write_tokens), 0)::bigint AS write, coalesce(sum(cost_usd), 0)::float AS cost`;

const totals = (r: Record<string, unknown>): UsageTotals => ({
  calls: Number(r.calls),
  inputTokens: Number(r.input),
  outputTokens: Number(r.output),
  cacheReadTokens: Number(r.read),
  cacheWriteTokens: Number(r.write),
  costUsd: Number(r.cost),
});

export async function conversationUsage(db: Queryable, id: string): Promise<UsageTotals> {
  // Its subagents' conversations (`<id>:sub:…`, store/subagent-store.ts) roll up into it.
  const res = await db.query(`SELECT ${TOTALS} FROM usage_ledger WHERE ${withSubagents('conversation_id', '$1')}`, [
    id,
  ]);
  return totals(res.rows[0]);
}

/** A tenant's usage by UTC day and project over the last `days` days. */
export async function tenantUsageByDay(
  db: Queryable,
  tenantId: string,
  days: number,
): Promise<Array<{ day: string; projectId: string } & UsageTotals>> {
  const res = await db.query(
    `SELECT to_char(date_trunc('day', u.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, c.project_id, ${TOTALS}
       FROM usage_ledger u JOIN conversations c ON c.id = u.conversation_id
      WHERE c.tenant_id = $1 AND u.created_at >= now() - make_interval(days => $2)
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [tenantId, days],
  );
  return res.rows.map((r) => ({ day: r.day as string, projectId: r.project_id as string, ...totals(r) }));
}
