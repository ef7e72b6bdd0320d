/**
 * A turn's staged attachments become part of it: each upload is copied (blob shared, no bytes
 * copied) to `<turn>/attachments/<name>` — readable as `fi:<turn>.user.attachments/<name>` — and
 * the turn gets a `user.attachment.meta` block (what the file is) and a `user.attachment` block
 * (an image or PDF as base64, which the render sends as an image / document content block; the
 * extracted text of other files). Idempotent: copies upsert, block ids are deterministic.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import { makeBlock, type Block } from '../../core/timeline/block';
import { paths } from '../../core/timeline/paths';
import type { AttachmentRef } from '../../core/turn/contracts';
import { copyArtifact, FILE_ARTIFACT_KIND, getArtifact, UPLOAD_ARTIFACT_KIND } from '../../store/artifact-store';

/** Largest file sent to the model inline, by kind (the provider's own limits). */
export const INLINE_MAX_BYTES = { image: 5 * 1024 * 1024, pdf: 32 * 1024 * 1024 } as const;
/** Characters of a text attachment shown inline; the rest is read with react.read. */
export const INLINE_TEXT_CHARS = 20_000;

export async function attachmentBlocks(
  pool: Pool,
  conversationId: string,
  turnId: string,
  refs: readonly AttachmentRef[],
  ts: string,
): Promise<Block[]> {
  const blocks: Block[] = [];
  for (const ref of refs) {
    const key = `${turnId}/attachments/${ref.name}`;
    const copied = await copyArtifact(pool, conversationId, UPLOAD_ARTIFACT_KIND, ref.uploadKey, {
      key,
      turnId,
      toKind: FILE_ARTIFACT_KIND,
    });
    const stored = await getArtifact(pool, conversationId, FILE_ARTIFACT_KIND, key);
    if (!copied || !stored?.bytes || stored.sha256 !== ref.sha256) {
      throw ApplicationFailure.nonRetryable(
        `attachment ${ref.name}: the staged upload ${ref.uploadKey} is missing or differs from its ref`,
        'AttachmentMissing',
      );
    }
    const path = paths.userAttachment(turnId, ref.name);
    const payload = (stored.payload ?? {}) as { text?: string; pages?: number };
    const meta = {
      name: ref.name,
      mime: ref.mime,
      kind: ref.kind,
      size_bytes: ref.sizeBytes,
      sha256: ref.sha256,
      path,
      ...(payload.pages !== undefined ? { pages: payload.pages } : {}),
      text_chars: payload.text?.length ?? 0,
    };
    blocks.push(
      makeBlock({
        type: 'user.attachment.meta',
        author: 'user',
        turn_id: turnId,
        ts,
        key: `meta.${ref.name}`,
        path,
        mime: 'application/json',
        text: JSON.stringify(meta),
        meta: { attachment: ref.name },
      }),
    );
    const inline =
      (ref.kind === 'image' && ref.sizeBytes <= INLINE_MAX_BYTES.image) ||
      (ref.kind === 'pdf' && ref.sizeBytes <= INLINE_MAX_BYTES.pdf);
    const text = payload.text ?? '';
    blocks.push(
      makeBlock({
        type: 'user.attachment',
        author: 'user',
        turn_id: turnId,
        ts,
        key: `file.${ref.name}`,
        path,
        mime: inline ? ref.mime : 'text/plain',
        ...(inline
          ? { base64: stored.bytes.toString('base64') }
          : {
              text:
                text.length > 0
                  ? text.slice(0, INLINE_TEXT_CHARS) +
                    (text.length > INLINE_TEXT_CHARS
                      ? `\n[… ${text.length - INLINE_TEXT_CHARS} more characters: react.read ${path}]`
                      : '')
                  : `[${ref.mime}, ${ref.sizeBytes} bytes: no text shown inline; ${path}]`,
            }),
        meta: { attachment: ref.name, kind: ref.kind, ...(text ? { text: text.slice(0, 200_000) } : {}) },
      }),
    );
  }
  return blocks;
}
