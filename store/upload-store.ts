/**
 * Staged attachments: preflighted files stored before their turn starts (artifact kind `upload`,
 * key `<message id>/<name>`, bytes content-addressed), all in one transaction; the turn's first
 * activity copies them into `<turn>/attachments/<name>` (no bytes copied).
 */
import type { Pool } from 'pg';
import { withTransaction } from './db';
import { putArtifact, UPLOAD_ARTIFACT_KIND } from './artifact-store';
import { claimConversation, type ConversationOwner } from './tenancy-store';
import { ensureConversation } from './timeline-store';

export interface StagedFile {
  name: string;
  mime: string;
  bytes: Buffer;
  /** Facts kept with the file (kind, extracted text, pages…). */
  payload: Record<string, unknown>;
}

export function uploadKey(messageId: string, name: string): string {
  return `${messageId}/${name}`;
}

/** Stores a message's files, all or none. Idempotent: staging the same message again rewrites the same rows. */
export async function stageUploads(
  db: Pool,
  conversationId: string,
  messageId: string,
  files: readonly StagedFile[],
  owner?: ConversationOwner,
): Promise<string[]> {
  if (owner) await claimConversation(db, conversationId, owner);
  else await ensureConversation(db, conversationId);
  return withTransaction(db, async (q) => {
    const keys: string[] = [];
    for (const f of files) {
      const key = uploadKey(messageId, f.name);
      await putArtifact(q, conversationId, {
        kind: UPLOAD_ARTIFACT_KIND,
        key,
        mime: f.mime,
        bytes: f.bytes,
        payload: f.payload,
        createdBy: messageId,
      });
      keys.push(key);
    }
    return keys;
  });
}
