/*
 * The scope an MCP server last asked for (issue 43, item 5): when a worker's call is refused with
 * `403 insufficient_scope` (step-up authorization), the SDK's `auth()` builds an authorization URL
 * with the wider scope; the worker cannot send a person there, so it keeps that scope here and the
 * next login (`dreact mcp login`, the web chat's connect button) asks for it. A scope names a
 * permission, not a secret: it is stored plain. Cleared when tokens are saved.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE mcp_oauth_credentials ADD COLUMN challenge_scope text`);
}
