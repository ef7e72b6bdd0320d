/**
 * Artifacts: a conversation's keyed documents (workspace files, attachments, the exported
 * timeline, turn logs, the sources pool). Workspace files (`file`, attachments included) are
 * content-addressed: their bytes live once per conversation in
 * `workspace_blobs` (SHA-256), so a file unchanged across turns, or checked out into a later
 * turn, costs one row, not another copy. Every write is idempotent.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from './db';
import { jsonForPostgres } from '../core/text';

/**
 * Artifact kind of workspace files: `<turn>/files/<rel>`, `<turn>/outputs/<rel>`, user
 * attachments `<turn>/attachments/<name>` and pulled refs `<turn>/pulled/<turn'>/…`.
 */
export const FILE_ARTIFACT_KIND = 'file';
/** Artifact kind of staged attachments (key `<message id>/<name>`), copied into the turn when it starts. */
export const UPLOAD_ARTIFACT_KIND = 'upload';
const CONTENT_ADDRESSED = new Set([FILE_ARTIFACT_KIND, UPLOAD_ARTIFACT_KIND]);

export interface ArtifactRow {
  kind: string;
  key: string;
  turnId?: string;
  mime?: string;
  payload?: unknown;
  /** Text content (a workspace file's text; decoded from its blob when it is valid UTF-8). */
  content?: string;
  /** Raw bytes (content-addressed kinds only); wins over `content` on write. */
  bytes?: Buffer;
  createdBy?: string;
}

export interface StoredArtifact extends ArtifactRow {
  sizeBytes: number;
  /** SHA-256 (hex) of a content-addressed artifact's bytes. */
  sha256?: string;
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The bytes as text when they are UTF-8 without NUL characters (what react.read can show). */
export function textOf(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.byteLength(text, 'utf8') === bytes.length && !text.includes('\uFFFD') ? text : undefined;
}

const UPDATE_ON_CONFLICT =
  'DO UPDATE SET payload = EXCLUDED.payload, content = EXCLUDED.content, mime = EXCLUDED.mime, size_bytes = EXCLUDED.size_bytes, ' +
  'turn_id = EXCLUDED.turn_id, created_by = EXCLUDED.created_by, blob_sha256 = EXCLUDED.blob_sha256, updated_at = now()';

/** Writes an artifact. `mode: 'once'` keeps the first write (idempotent side effects); 'upsert' replaces. */
export async function putArtifact(
  db: Queryable,
  conversationId: string,
  a: ArtifactRow,
  mode: 'once' | 'upsert' = 'upsert',
): Promise<boolean> {
  const payload = a.payload === undefined ? null : jsonForPostgres(a.payload);
  const conflict = mode === 'once' ? 'DO NOTHING' : UPDATE_ON_CONFLICT;
  const head = [conversationId, a.kind, a.key, a.turnId ?? null, a.mime ?? 'application/json', payload];
  if (!CONTENT_ADDRESSED.has(a.kind)) {
    const size = Buffer.byteLength(a.content ?? payload ?? '', 'utf8');
    const res = await db.query(
      `INSERT INTO artifacts (conversation_id, kind, key, turn_id, mime, payload, content, size_bytes, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (conversation_id, kind, key) ${conflict}`,
      [...head, a.content ?? null, size, a.createdBy ?? null],
    );
    return res.rowCount === 1;
  }
  const bytes = a.bytes ?? Buffer.from(a.content ?? '', 'utf8');
  const sha = sha256Hex(bytes);
  // One statement: the blob (once per content) and the row pointing at it.
  const res = await db.query(
    `WITH blob AS (
       INSERT INTO workspace_blobs (conversation_id, sha256, bytes, size_bytes) VALUES ($1, $10, $11, $8)
       ON CONFLICT (conversation_id, sha256) DO NOTHING
     )
     INSERT INTO artifacts (conversation_id, kind, key, turn_id, mime, payload, content, size_bytes, created_by, blob_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (conversation_id, kind, key) ${conflict}`,
    [...head, null, bytes.length, a.createdBy ?? null, sha, bytes],
  );
  return res.rowCount === 1;
}

/**
 * Points `toKey` at the blob of `fromKey` (same conversation, content-addressed kind): a checkout
 * copies no bytes. Upserts; false when `fromKey` does not exist.
 */
export async function copyArtifact(
  db: Queryable,
  conversationId: string,
  kind: string,
  fromKey: string,
  to: { key: string; turnId: string; payload?: unknown; createdBy?: string; toKind?: string },
): Promise<boolean> {
  if (!CONTENT_ADDRESSED.has(kind)) throw new Error(`copyArtifact: kind "${kind}" is not content-addressed`);
  const res = await db.query(
    `INSERT INTO artifacts (conversation_id, kind, key, turn_id, mime, payload, content, size_bytes, created_by, blob_sha256)
     SELECT conversation_id, $6, $4, $5, mime, COALESCE($7::jsonb, payload), NULL, size_bytes, $8, blob_sha256
       FROM artifacts WHERE conversation_id = $1 AND kind = $2 AND key = $3
     ON CONFLICT (conversation_id, kind, key) ${UPDATE_ON_CONFLICT}`,
    [
      conversationId,
      kind,
      fromKey,
      to.key,
      to.turnId,
      to.toKind ?? kind,
      to.payload === undefined ? null : jsonForPostgres(to.payload),
      to.createdBy ?? null,
    ],
  );
  return res.rowCount === 1;
}

export async function getArtifact(
  db: Queryable,
  conversationId: string,
  kind: string,
  key: string,
): Promise<StoredArtifact | undefined> {
  const res = await db.query(
    `SELECT a.kind, a.key, a.turn_id, a.mime, a.payload, a.content, a.size_bytes, a.created_by, a.blob_sha256, b.bytes
       FROM artifacts a
       LEFT JOIN workspace_blobs b ON b.conversation_id = a.conversation_id AND b.sha256 = a.blob_sha256
      WHERE a.conversation_id = $1 AND a.kind = $2 AND a.key = $3`,
    [conversationId, kind, key],
  );
  const r = res.rows[0];
  if (!r) return undefined;
  if (r.blob_sha256 && !r.bytes) throw new Error(`artifact ${kind}:${key} points at missing blob ${r.blob_sha256}`);
  const bytes: Buffer | undefined = r.bytes ?? undefined;
  return {
    kind: r.kind,
    key: r.key,
    turnId: r.turn_id ?? undefined,
    mime: r.mime,
    payload: r.payload ?? undefined,
    content: bytes ? textOf(bytes) : (r.content ?? undefined),
    ...(bytes ? { bytes, sha256: r.blob_sha256 } : {}),
    createdBy: r.created_by ?? undefined,
    sizeBytes: r.size_bytes,
  };
}

export interface ArtifactListing {
  kind: string;
  key: string;
  sizeBytes: number;
  turnId?: string;
  sha256?: string;
  mime: string;
  payload?: unknown;
}

/** Artifacts of a conversation (optionally one kind, optionally keys under `prefix`), oldest first. */
export async function listArtifacts(
  db: Queryable,
  conversationId: string,
  kind?: string,
  prefix?: string,
): Promise<ArtifactListing[]> {
  const res = await db.query(
    `SELECT kind, key, size_bytes, turn_id, blob_sha256, mime, payload FROM artifacts
      WHERE conversation_id = $1 AND ($2::text IS NULL OR kind = $2)
        AND ($3::text IS NULL OR starts_with(key, $3))
      ORDER BY created_at, key`,
    [conversationId, kind ?? null, prefix ?? null],
  );
  return res.rows.map((r) => ({
    kind: r.kind,
    key: r.key,
    sizeBytes: r.size_bytes,
    turnId: r.turn_id ?? undefined,
    mime: r.mime,
    ...(r.blob_sha256 ? { sha256: r.blob_sha256 } : {}),
    ...(r.payload ? { payload: r.payload } : {}),
  }));
}

/** Removes one artifact (e.g. a checkout in replace mode clearing the current turn's files). */
export async function deleteArtifacts(
  db: Queryable,
  conversationId: string,
  kind: string,
  keys: string[],
): Promise<number> {
  if (keys.length === 0) return 0;
  const res = await db.query(
    `DELETE FROM artifacts WHERE conversation_id = $1 AND kind = $2 AND key = ANY($3::text[])`,
    [conversationId, kind, keys],
  );
  return res.rowCount ?? 0;
}
