/*
 * Tenancy: every conversation belongs to a tenant, a project and (optionally) a user; existing
 * conversations and the CLI's belong to the local default tenant. API keys live here, hashed,
 * bound to a tenant/project (and optionally a user) with scopes; revocation takes effect on the
 * next request.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE conversations
      ADD COLUMN tenant_id  text NOT NULL DEFAULT 'local',
      ADD COLUMN project_id text NOT NULL DEFAULT 'default',
      ADD COLUMN user_id    text;
    CREATE INDEX conversations_by_tenant ON conversations (tenant_id, project_id, updated_at DESC);

    CREATE TABLE api_keys (
      id            text PRIMARY KEY,
      tenant_id     text NOT NULL,
      project_id    text NOT NULL,
      user_id       text,
      scopes        text[] NOT NULL,
      secret_sha256 bytea NOT NULL,
      created_at    timestamptz NOT NULL DEFAULT now(),
      revoked_at    timestamptz,
      last_used_at  timestamptz
    );
    CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, project_id);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    DROP TABLE api_keys;
    DROP INDEX conversations_by_tenant;
    ALTER TABLE conversations DROP COLUMN tenant_id, DROP COLUMN project_id, DROP COLUMN user_id;
  `);
}
