/*
 * A per-conversation counter bumped by every overlay write (hide, prune): a worker's cache of a
 * conversation's view knows from one number whether its overlays are still current.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE conversations ADD COLUMN overlay_seq bigint NOT NULL DEFAULT 0;`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE conversations DROP COLUMN overlay_seq;`);
}
