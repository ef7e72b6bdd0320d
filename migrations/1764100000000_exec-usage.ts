/* Exec sandbox usage in the ledger: vCPU-seconds and GB-seconds of an exec (its cost in cost_usd). */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    ALTER TABLE usage_ledger
      ADD COLUMN vcpu_seconds double precision,
      ADD COLUMN gb_seconds double precision;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE usage_ledger DROP COLUMN vcpu_seconds, DROP COLUMN gb_seconds;`);
}
