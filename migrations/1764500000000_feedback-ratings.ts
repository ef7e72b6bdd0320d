/*
 * Feedback ratings as the original platform has them: `ok | not_ok | neutral`, or NULL (the
 * rater cleared an earlier rating); `up` / `down` rows become `ok` / `not_ok` (the API keeps them
 * as aliases). Each row names its `origin` (`user`, or `machine`: a tool or an eval) and its
 * `rater` (`user:<id>`, `key:<id>` or `machine:<source>`): the latest row per turn, target and
 * rater is that rater's current rating, which the satisfaction rate counts. Machine feedback has
 * no API key (`key_id` may be NULL).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE feedback DROP CONSTRAINT feedback_rating_check;
    ALTER TABLE feedback ALTER COLUMN rating DROP NOT NULL;
    UPDATE feedback SET rating = CASE rating WHEN 'up' THEN 'ok' WHEN 'down' THEN 'not_ok' ELSE rating END;
    ALTER TABLE feedback ADD CONSTRAINT feedback_rating_check
      CHECK (rating IS NULL OR rating IN ('ok', 'not_ok', 'neutral'));
    ALTER TABLE feedback
      ADD COLUMN origin text NOT NULL DEFAULT 'user' CHECK (origin IN ('user', 'machine')),
      ADD COLUMN source text,
      ADD COLUMN rater  text;
    UPDATE feedback SET rater = COALESCE('user:' || user_id, 'key:' || key_id);
    ALTER TABLE feedback ALTER COLUMN rater SET NOT NULL;
    ALTER TABLE feedback ALTER COLUMN key_id DROP NOT NULL;
    CREATE INDEX feedback_latest ON feedback (conversation_id, turn_id, target, rater, created_at DESC);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    DROP INDEX feedback_latest;
    DELETE FROM feedback WHERE rating IS NULL OR rating = 'neutral' OR origin = 'machine';
    ALTER TABLE feedback DROP CONSTRAINT feedback_rating_check;
    UPDATE feedback SET rating = CASE rating WHEN 'ok' THEN 'up' ELSE 'down' END;
    ALTER TABLE feedback ALTER COLUMN rating SET NOT NULL;
    ALTER TABLE feedback ADD CONSTRAINT feedback_rating_check CHECK (rating IN ('up', 'down'));
    ALTER TABLE feedback ALTER COLUMN key_id SET NOT NULL;
    ALTER TABLE feedback DROP COLUMN origin, DROP COLUMN source, DROP COLUMN rater;
  `);
}
