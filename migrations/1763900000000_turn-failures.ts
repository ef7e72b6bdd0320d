/* A failed turn keeps its failure: status 'failed' plus the error message. */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE turns ADD COLUMN error text;`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE turns DROP COLUMN error;`);
}
