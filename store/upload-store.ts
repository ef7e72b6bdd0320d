/**
 * Staged attachments: preflighted files stored before their turn starts (artifact kind `upload`,
 * key `<message id>/<name>`, bytes content-addressed), all in one transaction with the claim of
 * the conversation and the check that the uploader may write to it; the turn's first activity
 * copies them into `<turn>/attachments/<name>` (no bytes copied).
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

/**
 * The conversation belongs to someone the uploader may not write for (another tenant, project or
 * user claimed the id first): nothing was staged. Callers answer it like a missing conversation.
 */
export class UploadNotOwned extends Error {
  constructor(readonly conversationId: string) {
    super(`no conversation "${conversationId}"`);
    this.name = 'UploadNotOwned';
  }
}

/** The rule of `canSee` (store/tenancy-store.ts) for an uploader given as the owner it would claim as. */
const mayWrite = (uploader: ConversationOwner, owner: ConversationOwner) =>
  owner.tenantId === uploader.tenantId &&
  owner.projectId === uploader.projectId &&
  (uploader.userId === null || owner.userId === uploader.userId);

/**
 * Stores a message's files, all or none, in ONE transaction with the conversation's claim and its
 * ownership check: with an `owner`, a free id becomes that owner's, and an id someone else holds —
 * even one claimed a moment ago, between the caller's own check and this call — throws
 * UploadNotOwned and writes nothing (a concurrent claim of the same id waits for this transaction,
 * so the check and the writes see the same owner). Without an owner (CLI, embedded stack: the
 * local tenant) the conversation is created when new. Idempotent: staging the same message again
 * rewrites the same rows.
 */
export async function stageUploads(
  db: Pool,
  conversationId: string,
  messageId: string,
  files: readonly StagedFile[],
  owner?: ConversationOwner,
): Promise<string[]> {
  return withTransaction(db, async (q) => {
    if (owner) {
      const actual = await claimConversation(q, conversationId, owner);
      if (!mayWrite(owner, actual)) throw new UploadNotOwned(conversationId);
    } else await ensureConversation(q, conversationId);
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
