/*
 * Signed webhooks that start turns (issue 44, item 3). `hooks`: one per webhook, owned by a tenant,
 * project and optional user, with the agent, the conversation every delivery continues (NULL: a new
 * one per delivery), the prompt template, the signature preset and the secret sealed with
 * AES-256-GCM under DREACT_MCP_TOKEN_KEY (store/mcp-oauth/seal.ts). `hook_deliveries`: one row per
 * accepted delivery, unique by (hook, delivery id) and by (hook, signature digest) — a replay is
 * recognised by either and starts nothing; it leaves with its hook.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE hooks (
      id              text PRIMARY KEY,
      tenant_id       text NOT NULL,
      project_id      text NOT NULL,
      user_id         text,
      agent           text NOT NULL,
      conversation_id text,
      prompt_template text,
      preset          text NOT NULL,
      secret_sealed   text NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      rotated_at      timestamptz
    );
    CREATE INDEX hooks_by_owner ON hooks (tenant_id, project_id, created_at);
    CREATE TABLE hook_deliveries (
      hook_id          text NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
      delivery_id      text NOT NULL,
      signature_sha256 text NOT NULL,
      conversation_id  text NOT NULL,
      message_id       text NOT NULL,
      turn_index       integer,
      created_at       timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (hook_id, delivery_id)
    );
    CREATE UNIQUE INDEX hook_deliveries_by_signature ON hook_deliveries (hook_id, signature_sha256);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE hook_deliveries; DROP TABLE hooks;`);
}
