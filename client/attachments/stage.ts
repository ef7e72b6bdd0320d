/**
 * A turn's attachments from upload to refs: the request is validated, every file preflighted
 * (client/attachments/preflight.ts), and only then are the files staged in Postgres in one
 * transaction with the conversation's claim (store/upload-store.ts). Any failure is a DreactError
 * (`bad_input` naming the file and the rule; `not_found` when another owner holds the id) and
 * nothing is written.
 */
import type { Pool } from 'pg';
import { AttachmentRejected, type AttachmentLimits } from '../../core/attachments/policy';
import { StartTurnRequestSchema, type AttachmentRef, type TurnOptionsInput } from '../../core/turn/contracts';
import { stageUploads, uploadKey, UploadNotOwned } from '../../store/upload-store';
import type { ConversationOwner } from '../../store/tenancy-store';
import { DreactError } from '../api';
import { normaliseText } from '../../core/text';
import { preflightAttachments, type AttachmentUpload } from './preflight';
import { formatZodError } from '../../core/validation';

export async function stageTurnAttachments(
  db: Pool,
  request: { conversationId: string; prompt: string; messageId: string; options?: TurnOptionsInput },
  uploads: readonly AttachmentUpload[],
  limits: Partial<AttachmentLimits> = {},
  /** Who a new conversation belongs to (the gateway's verified principal; default: the local tenant). */
  owner?: ConversationOwner,
): Promise<AttachmentRef[]> {
  if (uploads.length === 0) return [];
  const parsed = StartTurnRequestSchema.safeParse(request);
  if (!parsed.success) {
    throw new DreactError(formatZodError(parsed.error, { root: 'request' }), 'bad_input');
  }
  let prepared;
  try {
    prepared = await preflightAttachments(uploads, limits);
  } catch (err) {
    if (err instanceof AttachmentRejected) throw new DreactError(err.message, 'bad_input');
    throw err;
  }
  try {
    await stageUploads(
      db,
      request.conversationId,
      request.messageId,
      prepared.map((p) => ({
        name: p.name,
        mime: p.mime,
        bytes: p.bytes,
        payload: {
          kind: p.kind,
          name: p.name,
          // Extracted text is data the user did not type: normalised, not refused (core/text.ts).
          ...(p.text !== undefined ? { text: normaliseText(p.text) } : {}),
          ...(p.pages !== undefined ? { pages: p.pages } : {}),
        },
      })),
      owner,
    );
  } catch (err) {
    // Someone else holds the id (claimed before or during this request): nothing was written, and
    // the answer is the one a missing conversation gets.
    if (err instanceof UploadNotOwned) throw new DreactError(err.message, 'not_found');
    throw err;
  }
  return prepared.map((p) => ({
    name: p.name,
    mime: p.mime,
    kind: p.kind,
    sizeBytes: p.bytes.length,
    sha256: p.sha256,
    uploadKey: uploadKey(request.messageId, p.name),
  }));
}
