/*
 * Composite JSON canvases kept past the stream's retention (issue 32): the stream pruner folds a
 * turn's `attribute` events of the canvas channel into one row per (turn, channel instance) before
 * it deletes them, so a reload long after the turn still shows its widgets
 * (store/turn-display-store.ts reads the rows, then the events still on the stream).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE composite_canvases (
      conversation_id text NOT NULL,
      turn_id         text NOT NULL,
      instance        integer NOT NULL,
      -- [[key, value], ...] in first-arrival order, a later value in place of an earlier one
      attributes      jsonb NOT NULL,
      -- the stream offset of its first attribute: canvases keep their stream order
      first_seq       bigint NOT NULL,
      updated_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, turn_id, instance)
    );
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE composite_canvases;`);
}
