/* Compaction: one row per compaction (its plan, summaries and status, so the plan → summarise →
   commit activities hand over through Postgres, not history), the conversation's calibrated
   chars-per-token ratio and its consecutive failed compactions (the breaker). */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE conversations
      ADD COLUMN chars_per_token real,
      ADD COLUMN compaction_failures integer NOT NULL DEFAULT 0;

    -- What a model call was for: the ledger counts compaction separately from decisions.
    ALTER TABLE usage_ledger ADD COLUMN purpose text NOT NULL DEFAULT 'decision';
    -- A call recorded when the provider first reported usage and not (yet) finished: cut streams
    -- and calls whose worker died stay visible with what the provider billed for their input.
    ALTER TABLE usage_ledger ADD COLUMN cut boolean NOT NULL DEFAULT false;

    CREATE TABLE compactions (
      conversation_id text NOT NULL REFERENCES conversations(id),
      id              text NOT NULL,
      turn_id         text NOT NULL,
      status          text NOT NULL,
      plan            jsonb NOT NULL,
      summary         text,
      prefix_summary  text,
      usage           jsonb,
      error           text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      committed_at    timestamptz,
      PRIMARY KEY (conversation_id, id)
    );

    -- A round loads from the last range summary on: finding it must not scan the conversation.
    CREATE INDEX timeline_blocks_summaries ON timeline_blocks (conversation_id, seq) WHERE type = 'conv.range.summary';
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(
    `DROP TABLE compactions; ALTER TABLE usage_ledger DROP COLUMN purpose, DROP COLUMN cut; ALTER TABLE conversations DROP COLUMN chars_per_token, DROP COLUMN compaction_failures;`,
  );
}
