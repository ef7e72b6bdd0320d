/**
 * The versioned workspace's multi-file writes: a checkout (replace or overlay) and a pull, each
 * one transaction of blob-sharing copies (no bytes copied: the rows point at the same
 * content-addressed blobs). Idempotent: a retried call writes the same rows.
 */
import type { Pool } from 'pg';
import { withTransaction } from './db';
import { copyArtifact, deleteArtifacts, FILE_ARTIFACT_KIND, listArtifacts } from './artifact-store';

export interface FileCopy {
  fromKey: string;
  toKey: string;
  /** Logical ref recorded on the copy (`checked_out_from` / `pulled_from`). */
  origin: string;
}

/**
 * Builds the turn's files/ tree: `replace` first removes every current files/ entry, then the
 * copies are applied in order (a later copy of the same key wins). All or nothing.
 */
export async function checkoutFiles(
  db: Pool,
  conversationId: string,
  turnId: string,
  mode: 'replace' | 'overlay',
  copies: readonly FileCopy[],
  createdBy: string,
): Promise<{ removed: number }> {
  return withTransaction(db, async (q) => {
    let removed = 0;
    if (mode === 'replace') {
      const current = await listArtifacts(q, conversationId, FILE_ARTIFACT_KIND, `${turnId}/files/`);
      removed = await deleteArtifacts(
        q,
        conversationId,
        FILE_ARTIFACT_KIND,
        current.map((c) => c.key),
      );
    }
    for (const c of copies) {
      const ok = await copyArtifact(q, conversationId, FILE_ARTIFACT_KIND, c.fromKey, {
        key: c.toKey,
        turnId,
        payload: { checked_out_from: c.origin },
        createdBy,
      });
      if (!ok) throw new Error(`checkout: ${c.fromKey} vanished during the checkout`);
    }
    return { removed };
  });
}

/** Records pulled copies (read-only refs beside the workspace) in one transaction. */
export async function pullFiles(
  db: Pool,
  conversationId: string,
  turnId: string,
  copies: readonly FileCopy[],
  createdBy: string,
): Promise<void> {
  await withTransaction(db, async (q) => {
    for (const c of copies) {
      const ok = await copyArtifact(q, conversationId, FILE_ARTIFACT_KIND, c.fromKey, {
        key: c.toKey,
        turnId,
        payload: { pulled_from: c.origin, read_only: true },
        createdBy,
      });
      if (!ok) throw new Error(`pull: ${c.fromKey} vanished during the pull`);
    }
  });
}
