/**
 * Hosted files: the workspace files of a conversation a user may download — exec outputs whose
 * contract said `visibility: external` (read from the exec results' envelopes on the timeline),
 * files react.write wrote with `kind=file` (the artifact's payload says so) and the user's own
 * attachments (`<turn>/attachments/<name>`). Everything else in the workspace (internal outputs,
 * display writes, patches, pulled refs) stays private to the agent. A file is named by its
 * artifact key (`turn_2/outputs/chart.png`). Bytes live once per content in `workspace_blobs`
 * (bytea, SHA-256 keyed) and are read in ranges (`substring`), so a download never loads a whole
 * large file into memory: an uncompressed (TOASTed EXTERNAL or incompressible) value is sliced
 * chunk by chunk; a compressed one is decompressed up to the slice by Postgres.
 */
import type { Queryable } from './db';
import { parsePath, physicalPath } from '../core/timeline/paths';
import { logicalOfKey } from '../core/workspace/refs';
import { FILE_ARTIFACT_KIND } from './artifact-store';

export type HostedFileOrigin = 'exec' | 'write' | 'attachment';

export interface HostedFile {
  /** The file's key: `<turn id>/outputs|files|attachments/<rel>`. */
  path: string;
  /** The name the model uses for it: `fi:<turn>.files|outputs/<rel>`, `fi:<turn>.user.attachments/<name>`. */
  logicalPath: string;
  /** The last path segment. */
  name: string;
  turnId: string;
  /** The turn's index (1-based); 0 when the turn row is gone. */
  turn: number;
  mime: string;
  size: number;
  sha256: string;
  origin: HostedFileOrigin;
  /** When this version was written (ISO). */
  updatedAt: string;
}

const ATTACHMENT_KEY = /^[^/]+\/attachments\//;

/** Keys of exec outputs the contract made external (`meta.artifacts[].visibility` of exec results). */
async function externalOutputKeys(db: Queryable, conversationId: string): Promise<Set<string>> {
  const res = await db.query<{ output: string }>(
    `SELECT DISTINCT art->>'output' AS output
       FROM timeline_blocks tb
       CROSS JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(tb.block->'meta'->'artifacts') = 'array' THEN tb.block->'meta'->'artifacts' ELSE '[]'::jsonb END
       ) art
      WHERE tb.conversation_id = $1 AND tb.type = 'react.tool.result' AND art->>'visibility' = 'external'`,
    [conversationId],
  );
  const keys = new Set<string>();
  for (const { output } of res.rows) {
    try {
      const key = physicalPath(parsePath(output));
      if (key) keys.add(key);
    } catch {
      // An envelope naming no workspace path (never written by exec) is not a file to host.
    }
  }
  return keys;
}

/**
 * The conversation's hosted files, oldest first (optionally one turn's, optionally one key).
 * Reads the exec results' envelopes and the file artifacts: two statements.
 */
export async function listHostedFiles(
  db: Queryable,
  conversationId: string,
  filter: { turnId?: string; path?: string } = {},
): Promise<HostedFile[]> {
  const external = await externalOutputKeys(db, conversationId);
  const res = await db.query(
    `SELECT a.key, a.turn_id, coalesce(t.turn_index, 0) AS turn_index, a.mime, a.size_bytes, a.blob_sha256,
            a.payload->>'kind' AS write_kind, a.updated_at
       FROM artifacts a
       LEFT JOIN turns t ON t.conversation_id = a.conversation_id AND t.turn_id = a.turn_id
      WHERE a.conversation_id = $1 AND a.kind = $2 AND a.blob_sha256 IS NOT NULL
        AND ($3::text IS NULL OR a.turn_id = $3) AND ($4::text IS NULL OR a.key = $4)
        AND (a.key ~ '^[^/]+/attachments/' OR a.payload->>'kind' = 'file' OR a.key = ANY($5::text[]))
      ORDER BY a.created_at, a.key`,
    [conversationId, FILE_ARTIFACT_KIND, filter.turnId ?? null, filter.path ?? null, [...external]],
  );
  return res.rows.map((r) => {
    const key = r.key as string;
    return {
      path: key,
      logicalPath: logicalOfKey(key),
      name: key.slice(key.lastIndexOf('/') + 1),
      turnId: (r.turn_id as string | null) ?? key.slice(0, key.indexOf('/')),
      turn: Number(r.turn_index),
      mime: r.mime as string,
      size: Number(r.size_bytes),
      sha256: r.blob_sha256 as string,
      origin: ATTACHMENT_KEY.test(key) ? 'attachment' : r.write_kind === 'file' ? 'write' : 'exec',
      updatedAt: (r.updated_at as Date).toISOString(),
    };
  });
}

/** One hosted file by key, or undefined (absent, or not user-visible). */
export async function hostedFile(db: Queryable, conversationId: string, path: string): Promise<HostedFile | undefined> {
  return (await listHostedFiles(db, conversationId, { path }))[0];
}

/** Bytes `[offset, offset + length)` of a conversation's blob (fewer at its end; empty when it is gone). */
export async function readBlobRange(
  db: Queryable,
  conversationId: string,
  sha256: string,
  offset: number,
  length: number,
): Promise<Buffer> {
  const res = await db.query<{ chunk: Buffer }>(
    `SELECT substring(bytes FROM $3::int + 1 FOR $4::int) AS chunk FROM workspace_blobs
      WHERE conversation_id = $1 AND sha256 = $2`,
    [conversationId, sha256, offset, length],
  );
  return res.rows[0]?.chunk ?? Buffer.alloc(0);
}
