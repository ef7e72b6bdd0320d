/*
 * Content-addressed workspace: the bytes of workspace files (artifacts of kind `file`: files,
 * outputs, attachments) live once per conversation in `workspace_blobs`, keyed by their SHA-256; an
 * artifact row of those kinds points at its blob. Identical content written in many turns (a
 * checkout, an unchanged file) is stored once. Existing file artifacts move their text into blobs.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE workspace_blobs (
      conversation_id text NOT NULL REFERENCES conversations(id),
      sha256          text NOT NULL,
      bytes           bytea NOT NULL,
      size_bytes      integer NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, sha256)
    );
    ALTER TABLE artifacts ADD COLUMN blob_sha256 text;

    INSERT INTO workspace_blobs (conversation_id, sha256, bytes, size_bytes)
      SELECT DISTINCT conversation_id, encode(sha256(convert_to(content, 'UTF8')), 'hex'),
             convert_to(content, 'UTF8'), octet_length(convert_to(content, 'UTF8'))
        FROM artifacts WHERE kind = 'file' AND content IS NOT NULL
      ON CONFLICT DO NOTHING;
    UPDATE artifacts SET blob_sha256 = encode(sha256(convert_to(content, 'UTF8')), 'hex'), content = NULL
      WHERE kind = 'file' AND content IS NOT NULL;
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    UPDATE artifacts a SET content = convert_from(b.bytes, 'UTF8')
      FROM workspace_blobs b
     WHERE a.blob_sha256 = b.sha256 AND a.conversation_id = b.conversation_id;
    ALTER TABLE artifacts DROP COLUMN blob_sha256;
    DROP TABLE workspace_blobs;
  `);
}
