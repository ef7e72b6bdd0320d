/**
 * Feedback ratings: `ok | not_ok | neutral`, or `null` (the rater clears an earlier rating).
 * `up` and `down` stay accepted as aliases of `ok` and `not_ok` (what the first API took); what is
 * stored and returned is always the canonical name. The satisfaction rate is
 * `ok / (ok + not_ok + neutral)` over each rater's current rating (null when nothing is rated).
 * Pure.
 */
import { z } from 'zod';

export const FEEDBACK_RATINGS = ['ok', 'not_ok', 'neutral'] as const;
export type FeedbackRating = (typeof FEEDBACK_RATINGS)[number];
export const FEEDBACK_ORIGINS = ['user', 'machine'] as const;
export type FeedbackOrigin = (typeof FEEDBACK_ORIGINS)[number];

const ALIASES: Record<string, FeedbackRating> = { up: 'ok', down: 'not_ok' };
const RATING_RULE = 'rating must be "ok", "not_ok", "neutral" (aliases "up", "down") or null (clears)';

/** A rating as a client sends it (an alias, a canonical name, or null) → the canonical name or null. */
export const RatingInputSchema = z
  .union([z.enum([...FEEDBACK_RATINGS, 'up', 'down'], { error: RATING_RULE }), z.null()], { error: RATING_RULE })
  .transform((r): FeedbackRating | null => (r === null ? null : (ALIASES[r] ?? (r as FeedbackRating))));

/** A rating filter (`?rating=`): a canonical name or an alias. */
export const RatingFilterSchema = z
  .enum([...FEEDBACK_RATINGS, 'up', 'down'], { error: 'rating must be "ok", "not_ok", "neutral", "up" or "down"' })
  .transform((r): FeedbackRating => ALIASES[r] ?? (r as FeedbackRating));

export interface Satisfaction {
  ok: number;
  notOk: number;
  neutral: number;
  /** ok / (ok + notOk + neutral), null when nothing is rated. */
  rate: number | null;
}

export function satisfaction(counts: { ok: number; notOk: number; neutral: number }): Satisfaction {
  const rated = counts.ok + counts.notOk + counts.neutral;
  return { ...counts, rate: rated === 0 ? null : counts.ok / rated };
}
