/*
 * Subagent spend rolls up (issue 36, docs/governance.md): a delegation's link from the child
 * conversation to the turn that delegated (`subagent_delegations`, written before the child starts),
 * with the per-turn caps of every turn above it and the depth cap its turns inherit; the usage
 * ledger and the spend reservations name the root conversation and turn of a subagent's call beside
 * its own conversation, so the budgets of every ancestor count it.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE subagent_delegations (
      -- the child conversation (<parent>:sub:<callId>)
      conversation_id        text PRIMARY KEY,
      parent_conversation_id text NOT NULL,
      parent_turn_id         text NOT NULL,
      root_conversation_id   text NOT NULL,
      root_turn_id           text NOT NULL,
      -- [{conversationId, turnId, capUsd}]: every turn above the child that has a per-turn cap, root first
      turn_caps              jsonb NOT NULL DEFAULT '[]',
      -- the child's turns offer agent.delegate only while their depth is under it (the smallest max_depth above them)
      depth_cap              integer NOT NULL CHECK (depth_cap >= 1),
      created_at             timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX subagent_delegations_by_parent ON subagent_delegations (parent_conversation_id, parent_turn_id);

    ALTER TABLE usage_ledger ADD COLUMN root_conversation_id text, ADD COLUMN root_turn_id text;
    CREATE INDEX usage_ledger_by_root ON usage_ledger (root_conversation_id, root_turn_id)
      WHERE root_conversation_id IS NOT NULL;
    ALTER TABLE spend_reservations ADD COLUMN root_conversation_id text, ADD COLUMN root_turn_id text;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE spend_reservations DROP COLUMN root_conversation_id, DROP COLUMN root_turn_id;
    DROP INDEX usage_ledger_by_root;
    ALTER TABLE usage_ledger DROP COLUMN root_conversation_id, DROP COLUMN root_turn_id;
    DROP TABLE subagent_delegations;
  `);
}
