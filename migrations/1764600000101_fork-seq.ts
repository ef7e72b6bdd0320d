/*
 * Forks (`dreact fork <conversation> --at-turn N`): where the shared prefix ends — the last block
 * of the source conversation a fork sees (its turns 1..N), so the loaders read it by reference.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE conversation_forks ADD COLUMN up_to_seq bigint NOT NULL DEFAULT 0;`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE conversation_forks DROP COLUMN up_to_seq;`);
}
