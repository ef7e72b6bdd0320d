/*
 * react.memsearch on pgvector where the extension exists (production images with pgvector, the
 * embedded PGlite stack with @electric-sql/pglite-pgvector): the extension is created when it is
 * available and may be created here, and memory entries get an `embedding_vec vector` column
 * (dimensions vary by model; store/memory-pgvector.ts creates a partial HNSW index per model and
 * dimension on first use). Without the extension nothing changes: semantic search is the exact
 * scan in the worker (store/memory-vectors.ts).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    DO $$
    DECLARE ext_schema text;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')
         AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        BEGIN
          CREATE EXTENSION vector;
        EXCEPTION WHEN insufficient_privilege THEN
          RAISE NOTICE 'pgvector is available but this role may not create it: semantic search scans in the worker';
        END;
      END IF;
      SELECT extnamespace::regnamespace::text INTO ext_schema FROM pg_extension WHERE extname = 'vector';
      IF ext_schema IS NOT NULL THEN
        EXECUTE format('ALTER TABLE memory_entries ADD COLUMN embedding_vec %I.vector', ext_schema);
      END IF;
    END $$;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`ALTER TABLE memory_entries DROP COLUMN IF EXISTS embedding_vec;`);
}
