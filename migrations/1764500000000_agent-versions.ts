/*
 * Agent definitions: every version a worker started with (`agent_versions`, keyed by its content
 * hash, so a turn's AgentRef stays resolvable after the file changed and the worker restarted), and
 * the agent each turn ran under (`turns.agent_name`, `turns.agent_hash`; null for turns from before).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE agent_versions (
      hash text PRIMARY KEY,
      name text NOT NULL,
      definition jsonb NOT NULL,
      origin jsonb NOT NULL DEFAULT '{}'::jsonb,
      tools text[] NOT NULL DEFAULT '{}',
      first_loaded_at timestamptz NOT NULL DEFAULT now(),
      last_loaded_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX agent_versions_name_loaded ON agent_versions (name, last_loaded_at DESC);
    ALTER TABLE turns ADD COLUMN agent_name text, ADD COLUMN agent_hash text;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE turns DROP COLUMN agent_name, DROP COLUMN agent_hash;
    DROP TABLE agent_versions;
  `);
}
