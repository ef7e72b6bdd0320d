/**
 * Attachment preflight on the bytes, before anything is stored: file-type sniffs the type from
 * magic bytes, yauzl reads a zip container's central directory (entry count, declared sizes,
 * names — nothing is decompressed), unpdf extracts a PDF's text (a PDF it cannot open is
 * refused). The rules themselves are core/attachments/policy.ts. A rejection is an
 * AttachmentRejected naming the file and the rule.
 */
import { createHash } from 'node:crypto';
import yauzl from 'yauzl';
import {
  AttachmentLimitsSchema,
  AttachmentRejected,
  checkAttachment,
  checkTurn,
  isUtf8Text,
  type AttachmentKind,
  type AttachmentLimits,
  type InspectedBytes,
} from '../../core/attachments/policy';

export interface AttachmentUpload {
  /** The name the client gave (made safe here). */
  name: string;
  bytes: Buffer;
}

export interface PreparedAttachment {
  name: string;
  mime: string;
  kind: AttachmentKind;
  bytes: Buffer;
  sha256: string;
  /** Extracted text (PDF, text files) for memory search; capped. */
  text?: string;
  pages?: number;
}

async function sniff(bytes: Buffer): Promise<InspectedBytes['sniffed']> {
  const { fileTypeFromBuffer } = await import('file-type');
  const t = await fileTypeFromBuffer(bytes);
  return t ? { mime: t.mime, ext: t.ext } : undefined;
}

/** Central-directory facts of a zip; undefined when the bytes are not a readable zip. */
function readArchive(bytes: Buffer, maxEntries: number): Promise<InspectedBytes['archive'] | undefined> {
  return new Promise((resolve) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) {
        resolve(undefined);
        return;
      }
      const facts = { entries: zip.entryCount, uncompressedBytes: 0, compressedBytes: 0, names: [] as string[] };
      zip.on('entry', (e: yauzl.Entry) => {
        facts.uncompressedBytes += e.uncompressedSize;
        facts.compressedBytes += e.compressedSize;
        facts.names.push(e.fileName);
        if (facts.names.length > maxEntries) {
          zip.close();
          resolve(facts);
        } else zip.readEntry();
      });
      zip.on('end', () => resolve(facts));
      zip.on('error', () => resolve(undefined));
      zip.readEntry();
    });
  });
}

async function pdfText(bytes: Buffer, name: string, maxChars: number): Promise<{ text: string; pages: number }> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const { totalPages, text } = await extractText(pdf, { mergePages: true });
    return { text: text.slice(0, maxChars), pages: totalPages };
  } catch (err) {
    throw new AttachmentRejected(name, 'unreadable', `not a readable PDF (${(err as Error).message})`);
  }
}

/** Inspects and checks one file (no I/O besides parsing its bytes). */
export async function preflightOne(upload: AttachmentUpload, limits: AttachmentLimits): Promise<PreparedAttachment> {
  const { bytes } = upload;
  // Size first: never parse a file that is over the cap.
  const early = { sizeBytes: bytes.length, utf8Text: false };
  if (bytes.length === 0 || bytes.length > limits.maxFileBytes) checkAttachment(upload.name, early, limits);
  const sniffed = await sniff(bytes);
  const facts: InspectedBytes = {
    sizeBytes: bytes.length,
    ...(sniffed ? { sniffed } : {}),
    utf8Text: !sniffed && isUtf8Text(bytes),
  };
  if (sniffed?.mime === 'application/zip' || sniffed?.mime.startsWith('application/vnd.') || sniffed?.ext === 'docx') {
    const archive = await readArchive(bytes, limits.maxArchiveEntries);
    if (archive) facts.archive = archive;
  }
  const verdict = checkAttachment(upload.name, facts, limits);
  const prepared: PreparedAttachment = {
    ...verdict,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  if (verdict.kind === 'pdf') Object.assign(prepared, await pdfText(bytes, upload.name, limits.maxExtractedChars));
  if (verdict.kind === 'text') prepared.text = bytes.toString('utf8').slice(0, limits.maxExtractedChars);
  return prepared;
}

/** Preflights a turn's files: every file, then the turn's caps. All accepted, or a rejection. */
export async function preflightAttachments(
  uploads: readonly AttachmentUpload[],
  limitsInput: Partial<AttachmentLimits> = {},
): Promise<PreparedAttachment[]> {
  const limits = AttachmentLimitsSchema.parse(limitsInput);
  // Count and total first, on the raw sizes: a flood is refused before any file is parsed.
  checkTurn(
    uploads.map((u) => ({ rawName: u.name, name: u.name, sizeBytes: u.bytes.length })),
    { ...limits, maxTurnBytes: limits.maxTurnBytes },
  );
  const prepared: PreparedAttachment[] = [];
  for (const u of uploads) prepared.push(await preflightOne(u, limits));
  checkTurn(
    prepared.map((p, i) => ({ rawName: uploads[i]!.name, name: p.name, sizeBytes: p.bytes.length })),
    limits,
  );
  return prepared;
}
