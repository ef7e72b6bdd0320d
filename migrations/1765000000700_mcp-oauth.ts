/*
 * OAuth 2.1 credentials of MCP servers (issue 43, item 5): per tenant and user ('' for a key without
 * one) and server, the dynamically registered client, the tokens and — while a login is pending —
 * the PKCE verifier, each sealed with AES-256-GCM under DREACT_MCP_TOKEN_KEY
 * (store/mcp-oauth/seal.ts); `state_hash` (sha256 of the pending login's `state`) finds the row when
 * the authorization server redirects back to the gateway.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE mcp_oauth_credentials (
      tenant_id       text NOT NULL,
      user_id         text NOT NULL DEFAULT '',
      server          text NOT NULL,
      server_url      text NOT NULL,
      client_info     text,
      tokens          text,
      tokens_saved_at timestamptz,
      verifier        text,
      state_hash      text,
      redirect_url    text,
      updated_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, user_id, server)
    );
    CREATE UNIQUE INDEX mcp_oauth_credentials_by_state ON mcp_oauth_credentials (state_hash)
      WHERE state_hash IS NOT NULL;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE mcp_oauth_credentials;`);
}
