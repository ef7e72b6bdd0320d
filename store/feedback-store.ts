/**
 * Feedback rows and their timeline block, written in one transaction (idempotent by feedback id:
 * a retried POST with the same id writes nothing new), and queries bound to a tenant scope.
 */
import type { Pool } from 'pg';
import { withTransaction, type Queryable } from './db';
import { appendBlocks } from './timeline-store';
import type { Block } from '../core/timeline/block';
import type { ConversationOwner } from './tenancy-store';

export interface FeedbackRow {
  feedbackId: string;
  conversationId: string;
  turnId: string;
  target: 'turn' | 'completion';
  rating: 'up' | 'down';
  text: string | null;
  userId: string | null;
  createdAt: string;
}

/** Stores the feedback and appends its block; false when this feedback id was stored before. */
export async function recordFeedback(
  db: Pool,
  row: Omit<FeedbackRow, 'createdAt'> & { tenantId: string; projectId: string; keyId: string },
  block: Block,
): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const res = await tx.query(
      `INSERT INTO feedback (id, conversation_id, turn_id, target, rating, text, tenant_id, project_id, user_id, key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
      [
        row.feedbackId,
        row.conversationId,
        row.turnId,
        row.target,
        row.rating,
        row.text,
        row.tenantId,
        row.projectId,
        row.userId,
        row.keyId,
      ],
    );
    if ((res.rowCount ?? 0) === 0) return false;
    await appendBlocks(tx, row.conversationId, [block]);
    return true;
  });
}

const toRow = (r: Record<string, unknown>): FeedbackRow => ({
  feedbackId: r.id as string,
  conversationId: r.conversation_id as string,
  turnId: r.turn_id as string,
  target: r.target as FeedbackRow['target'],
  rating: r.rating as FeedbackRow['rating'],
  text: (r.text as string | null) ?? null,
  userId: (r.user_id as string | null) ?? null,
  createdAt: (r.created_at as Date).toISOString(),
});

export async function feedbackOf(db: Queryable, conversationId: string): Promise<FeedbackRow[]> {
  const res = await db.query(`SELECT * FROM feedback WHERE conversation_id = $1 ORDER BY created_at, id`, [
    conversationId,
  ]);
  return res.rows.map(toRow);
}

/** A tenant scope's feedback, newest first, optionally one rating, over the last `days` days. */
export async function listFeedback(
  db: Queryable,
  scope: ConversationOwner,
  filter: { rating?: 'up' | 'down'; days: number; limit: number },
): Promise<FeedbackRow[]> {
  const res = await db.query(
    `SELECT * FROM feedback
      WHERE tenant_id = $1 AND project_id = $2 AND ($3::text IS NULL OR user_id = $3)
        AND ($4::text IS NULL OR rating = $4) AND created_at >= now() - make_interval(days => $5)
      ORDER BY created_at DESC, id LIMIT $6`,
    [scope.tenantId, scope.projectId, scope.userId, filter.rating ?? null, filter.days, filter.limit],
  );
  return res.rows.map(toRow);
}
