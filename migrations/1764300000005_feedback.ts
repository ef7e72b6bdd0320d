/*
 * Feedback: thumbs up / down with optional text on a turn or on its completion, from the verified
 * key's tenant, project and user. Each also becomes a `user.feedback` block on the timeline, so
 * the next turn's render shows it.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE feedback (
      id              text PRIMARY KEY,
      conversation_id text NOT NULL REFERENCES conversations(id),
      turn_id         text NOT NULL,
      target          text NOT NULL CHECK (target IN ('turn', 'completion')),
      rating          text NOT NULL CHECK (rating IN ('up', 'down')),
      text            text,
      tenant_id       text NOT NULL,
      project_id      text NOT NULL,
      user_id         text,
      key_id          text NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX feedback_by_conversation ON feedback (conversation_id, created_at);
    CREATE INDEX feedback_by_tenant ON feedback (tenant_id, project_id, created_at DESC);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE feedback;`);
}
