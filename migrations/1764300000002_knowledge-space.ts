/*
 * The knowledge space (`ks:`): reference documents a deployment configures
 * (DREACT_KNOWLEDGE_DIR), indexed when a worker starts. One row per document (its extracted
 * text and content hash: unchanged files are not re-indexed) and one per chunk, searched like
 * react.memsearch's lexical half (`simple` above `english`, GIN). Shared by every conversation of
 * the deployment; `space` names the deployment's space (DREACT_KNOWLEDGE_SPACE, default "default").
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE knowledge_documents (
      space       text NOT NULL,
      path        text NOT NULL,
      sha256      text NOT NULL,
      mime        text NOT NULL,
      title       text NOT NULL,
      text        text NOT NULL,
      size_bytes  bigint NOT NULL,
      indexed_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (space, path)
    );
    CREATE TABLE knowledge_chunks (
      space  text NOT NULL,
      path   text NOT NULL,
      chunk  integer NOT NULL,
      text   text NOT NULL,
      tsv    tsvector GENERATED ALWAYS AS (
               setweight(to_tsvector('simple'::regconfig, path || ' ' || text), 'A') ||
               setweight(to_tsvector('english'::regconfig, text), 'B')
             ) STORED,
      PRIMARY KEY (space, path, chunk),
      FOREIGN KEY (space, path) REFERENCES knowledge_documents (space, path) ON DELETE CASCADE
    );
    CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE knowledge_chunks; DROP TABLE knowledge_documents;`);
}
