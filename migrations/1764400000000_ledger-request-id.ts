/*
 * The provider's id of each model call (Anthropic's `request-id`) in the usage ledger: a row can be
 * matched with the provider's own records (billing, support), and a call the provider answered but
 * that failed before reporting usage still has a row that names it.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE usage_ledger ADD COLUMN request_id text;`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE usage_ledger DROP COLUMN request_id;`);
}
