/*
 * Results of tool calls that ran concurrently wait here until the whole batch is done; then they
 * are appended to the timeline in call order, in one statement (activities/turn/tool-results.ts).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE tool_results_pending (
      conversation_id text NOT NULL REFERENCES conversations(id),
      call_id         text NOT NULL,
      turn_id         text NOT NULL,
      blocks          jsonb NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, call_id)
    );
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE tool_results_pending;`);
}
