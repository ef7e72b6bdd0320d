/*
 * react.memsearch's index: one row per indexed piece of a past turn (user messages, answers,
 * attachment text, summaries, notes), with the logical path react.read reopens it by. Lexical
 * search over a generated tsvector of two analysers — `simple` (weight A: file names, error
 * strings and words verbatim) above `english` (weight B: stemmed) — with a GIN index; an
 * optional embedding (unit length, float32 little-endian bytes) for semantic search by exact
 * scan: workers keep a conversation's vectors in memory and read only rows whose `revision` is
 * newer than what they hold (store/memory-vectors.ts).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE SEQUENCE memory_entries_revision;
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
      embedding       bytea,
      embedding_model text,
      revision        bigint NOT NULL DEFAULT nextval('memory_entries_revision'),
      PRIMARY KEY (conversation_id, entry_key)
    );
    CREATE INDEX memory_entries_tsv ON memory_entries USING gin (tsv);
    CREATE INDEX memory_entries_turn ON memory_entries (conversation_id, turn_index);
    CREATE INDEX memory_entries_revision_idx ON memory_entries (conversation_id, revision);
    -- Indexing reads one turn's blocks at persist time.
    CREATE INDEX timeline_blocks_turn ON timeline_blocks (conversation_id, turn_id);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP INDEX timeline_blocks_turn; DROP TABLE memory_entries; DROP SEQUENCE memory_entries_revision;`);
}
