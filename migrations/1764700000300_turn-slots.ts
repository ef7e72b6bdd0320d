/*
 * Per-tenant turn concurrency (issue 30, docs/governance.md): a tenant's limit on turns running at
 * once (`turn_limits`; no row: no limit) and the slots its turns hold or queue for (`turn_slots`,
 * one row per turn workflow: granted, or queued in `seq` order). A turn takes its slot when it
 * loads its context and gives it back when it ends; the releasing turn grants the head of the
 * queue and signals it (`signalled` makes that step retry-safe).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE turn_limits (
      tenant_id  text PRIMARY KEY,
      max_turns  integer NOT NULL CHECK (max_turns >= 1),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE turn_slots (
      workflow_id     text PRIMARY KEY,
      tenant_id       text NOT NULL,
      conversation_id text NOT NULL,
      seq             bigserial NOT NULL,
      granted         boolean NOT NULL DEFAULT false,
      -- a granted turn has been told (a turn granted at once needs no signal)
      signalled       boolean NOT NULL DEFAULT false,
      created_at      timestamptz NOT NULL DEFAULT now(),
      granted_at      timestamptz
    );
    CREATE INDEX turn_slots_by_tenant ON turn_slots (tenant_id, granted, seq);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE turn_slots, turn_limits;`);
}
