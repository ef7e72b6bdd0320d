/* Provider prompt-cache touch state per conversation (TTL pruning on render). */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE conversations
      ADD COLUMN cache_last_touch_at bigint,
      ADD COLUMN cache_ttl_seconds integer;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE conversations DROP COLUMN cache_last_touch_at, DROP COLUMN cache_ttl_seconds;`);
}
