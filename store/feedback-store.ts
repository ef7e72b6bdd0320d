/**
 * Feedback rows (idempotent by feedback id: a retried POST with the same id writes nothing new)
 * and queries bound to a tenant scope. User feedback is written with its `user.feedback` timeline
 * block in one transaction (the next turn's render shows it); machine feedback (a tool or an eval,
 * `origin: machine`) is stored only — it never steers the agent. A rating is `ok | not_ok |
 * neutral` or null (a clear); each rater's latest row per turn and target is its current rating,
 * which the satisfaction rate counts (core/feedback/rating.ts).
 */
import type { Pool } from 'pg';
import { withTransaction, type Queryable } from './db';
import { appendBlocks } from './timeline-store';
import type { Block } from '../core/timeline/block';
import type { ConversationOwner } from './tenancy-store';
import { satisfaction, type FeedbackOrigin, type FeedbackRating, type Satisfaction } from '../core/feedback/rating';

export interface FeedbackRow {
  feedbackId: string;
  conversationId: string;
  turnId: string;
  target: 'turn' | 'completion';
  /** null: the rater cleared its earlier rating. */
  rating: FeedbackRating | null;
  text: string | null;
  userId: string | null;
  origin: FeedbackOrigin;
  /** The tool or eval that rated (machine feedback). */
  source: string | null;
  createdAt: string;
}

export type NewFeedback = Omit<FeedbackRow, 'createdAt'> & {
  tenantId: string;
  projectId: string;
  keyId: string | null;
};

/** Who rated: a user, else the key, else the machine source (each has one current rating per turn and target). */
export function raterOf(row: Pick<NewFeedback, 'origin' | 'userId' | 'keyId' | 'source'>): string {
  if (row.origin === 'machine') return `machine:${row.source ?? 'unnamed'}`;
  return row.userId !== null ? `user:${row.userId}` : `key:${row.keyId ?? 'unknown'}`;
}

async function insertFeedback(db: Queryable, row: NewFeedback): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO feedback (id, conversation_id, turn_id, target, rating, text, tenant_id, project_id, user_id, key_id, origin, source, rater)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING`,
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
      row.origin,
      row.source,
      raterOf(row),
    ],
  );
  return (res.rowCount ?? 0) > 0;
}

/** Stores the feedback and appends its block; false when this feedback id was stored before. */
export async function recordFeedback(db: Pool, row: NewFeedback, block: Block): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    if (!(await insertFeedback(tx, row))) return false;
    await appendBlocks(tx, row.conversationId, [block]);
    return true;
  });
}

/**
 * Machine feedback (a tool's or an eval's verdict on a turn): stored with the conversation's owner,
 * `origin: machine`, no key and no timeline block. False when this feedback id was stored before;
 * an error when the conversation or the turn does not exist.
 */
export async function recordMachineFeedback(
  db: Queryable,
  input: {
    feedbackId: string;
    conversationId: string;
    turnId: string;
    target: 'turn' | 'completion';
    rating: FeedbackRating | null;
    text?: string | null;
    source: string;
  },
): Promise<boolean> {
  const owner = await db.query(
    `SELECT c.tenant_id, c.project_id, c.user_id FROM conversations c
       JOIN turns t ON t.conversation_id = c.id AND t.turn_id = $2
      WHERE c.id = $1`,
    [input.conversationId, input.turnId],
  );
  const o = owner.rows[0];
  if (!o) throw new Error(`machine feedback: conversation "${input.conversationId}" has no turn ${input.turnId}`);
  return insertFeedback(db, {
    feedbackId: input.feedbackId,
    conversationId: input.conversationId,
    turnId: input.turnId,
    target: input.target,
    rating: input.rating,
    text: input.text ?? null,
    userId: null,
    origin: 'machine',
    source: input.source,
    tenantId: o.tenant_id,
    projectId: o.project_id,
    keyId: null,
  });
}

const toRow = (r: Record<string, unknown>): FeedbackRow => ({
  feedbackId: r.id as string,
  conversationId: r.conversation_id as string,
  turnId: r.turn_id as string,
  target: r.target as FeedbackRow['target'],
  rating: (r.rating as FeedbackRating | null) ?? null,
  text: (r.text as string | null) ?? null,
  userId: (r.user_id as string | null) ?? null,
  origin: r.origin as FeedbackOrigin,
  source: (r.source as string | null) ?? null,
  createdAt: (r.created_at as Date).toISOString(),
});

export async function feedbackOf(db: Queryable, conversationId: string): Promise<FeedbackRow[]> {
  const res = await db.query(`SELECT * FROM feedback WHERE conversation_id = $1 ORDER BY created_at, id`, [
    conversationId,
  ]);
  return res.rows.map(toRow);
}

/** A tenant scope's feedback, newest first, optionally one rating and origin, over the last `days` days. */
export async function listFeedback(
  db: Queryable,
  scope: ConversationOwner,
  filter: { rating?: FeedbackRating; origin?: FeedbackOrigin; days: number; limit: number },
): Promise<FeedbackRow[]> {
  const res = await db.query(
    `SELECT * FROM feedback
      WHERE tenant_id = $1 AND project_id = $2 AND ($3::text IS NULL OR user_id = $3)
        AND ($4::text IS NULL OR rating = $4) AND ($5::text IS NULL OR origin = $5)
        AND created_at >= now() - make_interval(days => $6)
      ORDER BY created_at DESC, id LIMIT $7`,
    [
      scope.tenantId,
      scope.projectId,
      scope.userId,
      filter.rating ?? null,
      filter.origin ?? null,
      filter.days,
      filter.limit,
    ],
  );
  return res.rows.map(toRow);
}

/** Satisfaction of user and of machine feedback. */
export interface SatisfactionByOrigin {
  user: Satisfaction;
  machine: Satisfaction;
}

/** Counts of current ratings (each rater's latest row per turn and target; a clear counts nothing). */
const CURRENT_RATINGS = (where: string) => `
  WITH latest AS (
    SELECT DISTINCT ON (conversation_id, turn_id, target, rater) project_id, origin, rating
      FROM feedback WHERE ${where}
     ORDER BY conversation_id, turn_id, target, rater, created_at DESC, id DESC
  )
  SELECT project_id, origin, count(*) FILTER (WHERE rating = 'ok')::int AS ok,
         count(*) FILTER (WHERE rating = 'not_ok')::int AS not_ok,
         count(*) FILTER (WHERE rating = 'neutral')::int AS neutral
    FROM latest GROUP BY project_id, origin`;

type CountRow = { project_id: string; origin: FeedbackOrigin; ok: number; not_ok: number; neutral: number };

function byOrigin(rows: CountRow[]): SatisfactionByOrigin {
  const sum = (origin: FeedbackOrigin) => {
    const mine = rows.filter((r) => r.origin === origin);
    return satisfaction({
      ok: mine.reduce((a, r) => a + r.ok, 0),
      notOk: mine.reduce((a, r) => a + r.not_ok, 0),
      neutral: mine.reduce((a, r) => a + r.neutral, 0),
    });
  };
  return { user: sum('user'), machine: sum('machine') };
}

/** A conversation's satisfaction rate. */
export async function conversationSatisfaction(db: Queryable, conversationId: string): Promise<SatisfactionByOrigin> {
  const res = await db.query<CountRow>(CURRENT_RATINGS('conversation_id = $1'), [conversationId]);
  return byOrigin(res.rows);
}

/** A tenant's satisfaction rate, overall and per project, over feedback of the last `days` days. */
export async function tenantSatisfaction(
  db: Queryable,
  tenantId: string,
  days: number,
): Promise<SatisfactionByOrigin & { projects: Array<{ projectId: string } & SatisfactionByOrigin> }> {
  const res = await db.query<CountRow>(
    CURRENT_RATINGS('tenant_id = $1 AND created_at >= now() - make_interval(days => $2)'),
    [tenantId, days],
  );
  const projects = [...new Set(res.rows.map((r) => r.project_id))].sort();
  return {
    ...byOrigin(res.rows),
    projects: projects.map((projectId) => ({
      projectId,
      ...byOrigin(res.rows.filter((r) => r.project_id === projectId)),
    })),
  };
}
