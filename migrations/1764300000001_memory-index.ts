/*
 * react.memsearch's index: one row per indexed piece of a past turn (user messages, answers,
 * attachment text, summaries, notes), with the logical path react.read reopens it by. Lexical
 * search over a generated tsvector of two analysers — `simple` (weight A: file names, error
 * strings and words verbatim) above `english` (weight B: stemmed) — with a GIN index; an
 * optional embedding (unit-length real[]) for semantic search by exact scan.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE memory_entries (
      conversation_id text NOT NULL REFERENCES conversations(id),
      entry_key       text NOT NULL,
      turn_id         text NOT NULL,
      turn_index      integer NOT NULL,
      target          text NOT NULL,
      path            text NOT NULL,
      ts              timestamptz NOT NULL,
      text            text NOT NULL,
      anchors         text NOT NULL DEFAULT '',
      tsv             tsvector GENERATED ALWAYS AS (
                        setweight(to_tsvector('simple'::regconfig, anchors || ' ' || text), 'A') ||
                        setweight(to_tsvector('english'::regconfig, text), 'B')
                      ) STORED,
      embedding       real[],
      embedding_model text,
      PRIMARY KEY (conversation_id, entry_key)
    );
    CREATE INDEX memory_entries_tsv ON memory_entries USING gin (tsv);
    CREATE INDEX memory_entries_turn ON memory_entries (conversation_id, turn_index);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE memory_entries;`);
}
