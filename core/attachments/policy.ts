/**
 * Attachment preflight rules, decided before anything is stored: size caps per file and per
 * turn, a file count cap, an allow-list of types sniffed from the bytes (never the client's
 * word), the file extension agreeing with those bytes, archive limits against decompression
 * bombs, no macro-bearing Office documents, and file names made safe (path traversal refused).
 * The facts about each file's bytes come from an inspector (client/attachments/preflight.ts). Pure.
 */
import { z } from 'zod';

export const AttachmentLimitsSchema = z.object({
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  maxTurnBytes: z
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  maxFiles: z.number().int().positive().default(10),
  maxNameChars: z.number().int().min(8).default(120),
  /** Office documents are zip archives: caps on what they would expand to. */
  maxArchiveEntries: z.number().int().positive().default(2_000),
  maxArchiveUncompressedBytes: z
    .number()
    .int()
    .positive()
    .default(100 * 1024 * 1024),
  maxCompressionRatio: z.number().positive().default(100),
  /** Characters of extracted text kept for search (PDF, text). */
  maxExtractedChars: z.number().int().positive().default(200_000),
});
export type AttachmentLimits = z.output<typeof AttachmentLimitsSchema>;

export type AttachmentKind = 'image' | 'pdf' | 'text' | 'office';

/** The allow-list: sniffed MIME type → kind and the extensions that may carry it. */
export const ALLOWED_TYPES: Readonly<Record<string, { kind: AttachmentKind; exts: readonly string[] }>> = {
  'image/png': { kind: 'image', exts: ['png'] },
  'image/jpeg': { kind: 'image', exts: ['jpg', 'jpeg'] },
  'image/gif': { kind: 'image', exts: ['gif'] },
  'image/webp': { kind: 'image', exts: ['webp'] },
  'application/pdf': { kind: 'pdf', exts: ['pdf'] },
  'text/plain': { kind: 'text', exts: ['txt', 'log', 'text'] },
  'text/markdown': { kind: 'text', exts: ['md', 'markdown'] },
  'text/csv': { kind: 'text', exts: ['csv'] },
  'text/tab-separated-values': { kind: 'text', exts: ['tsv'] },
  'application/json': { kind: 'text', exts: ['json'] },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { kind: 'office', exts: ['docx'] },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { kind: 'office', exts: ['xlsx'] },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': { kind: 'office', exts: ['pptx'] },
};

/** Text types have no magic bytes: valid UTF-8 text takes its type from the extension. */
const TEXT_BY_EXT: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(ALLOWED_TYPES)
    .filter(([, t]) => t.kind === 'text')
    .flatMap(([mime, t]) => t.exts.map((e) => [e, mime])),
);

export type AttachmentRule =
  | 'name'
  | 'empty'
  | 'file_size'
  | 'turn_size'
  | 'file_count'
  | 'duplicate_name'
  | 'type_not_allowed'
  | 'extension_mismatch'
  | 'archive_bomb'
  | 'macros'
  | 'unreadable';

export class AttachmentRejected extends Error {
  constructor(
    readonly file: string,
    readonly rule: AttachmentRule,
    detail: string,
  ) {
    super(`attachment ${JSON.stringify(file)} rejected (${rule}): ${detail}`);
    this.name = 'AttachmentRejected';
  }
}

/** What the inspector learnt from a file's bytes. */
export interface InspectedBytes {
  sizeBytes: number;
  /** file-type's sniff from magic bytes (undefined: no known signature). */
  sniffed?: { mime: string; ext: string };
  /** The bytes are UTF-8 text without NUL characters. */
  utf8Text: boolean;
  /** Central-directory facts of a zip container (Office documents). */
  archive?: { entries: number; uncompressedBytes: number; compressedBytes: number; names: string[] };
}

/**
 * A safe stored name: NFC, no control characters, whitespace collapsed, leading dots and
 * spaces dropped, other characters outside letters, digits, `._-+ ()` replaced by `_`, cut to
 * maxNameChars keeping the extension. Path separators and `..` are refused, not rewritten.
 */
export function sanitizeName(raw: string, limits: Pick<AttachmentLimits, 'maxNameChars'>): string {
  if (/[/\\]/.test(raw) || raw.split(/[/\\]/).includes('..') || raw.trim() === '..' || raw.trim() === '.') {
    throw new AttachmentRejected(
      raw,
      'name',
      'the name contains a path (/, \\ or ..); send the file under its own name',
    );
  }
  if (raw.includes('\0')) throw new AttachmentRejected(raw, 'name', 'the name contains a NUL character');
  let name = raw
    .normalize('NFC')
    .replace(/\s+/g, ' ')
    .replace(/\p{Cc}/gu, '')
    .trim()
    .replace(/^[.\s]+/, '')
    .replace(/[^\p{L}\p{N}._\-+ ()]/gu, '_');
  if (name === '' || !/[\p{L}\p{N}]/u.test(name))
    throw new AttachmentRejected(raw, 'name', 'the name is empty once made safe');
  if (name.length > limits.maxNameChars) {
    const ext = /\.[A-Za-z0-9]{1,8}$/.exec(name)?.[0] ?? '';
    name = name.slice(0, limits.maxNameChars - ext.length) + ext;
  }
  return name;
}

/** UTF-8 text without NUL characters (what text attachments must be). */
export function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false; // invalid UTF-8: not text
  }
}

export function extensionOf(name: string): string {
  return /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
}

export interface AttachmentVerdict {
  name: string;
  mime: string;
  kind: AttachmentKind;
}

/** Checks one file; throws AttachmentRejected naming the file and the rule it breaks. */
export function checkAttachment(rawName: string, facts: InspectedBytes, limits: AttachmentLimits): AttachmentVerdict {
  const name = sanitizeName(rawName, limits);
  if (facts.sizeBytes === 0) throw new AttachmentRejected(rawName, 'empty', 'the file is empty');
  if (facts.sizeBytes > limits.maxFileBytes) {
    throw new AttachmentRejected(
      rawName,
      'file_size',
      `${facts.sizeBytes} bytes, over the ${limits.maxFileBytes}-byte limit per file`,
    );
  }
  const ext = extensionOf(name);
  let mime: string;
  if (facts.sniffed) {
    mime = facts.sniffed.mime;
    if (!ALLOWED_TYPES[mime]) {
      throw new AttachmentRejected(
        rawName,
        facts.archive && /macro/i.test(mime) ? 'macros' : 'type_not_allowed',
        `the bytes are ${mime} (.${facts.sniffed.ext}); allowed: images (png, jpeg, gif, webp), PDF, text, CSV, Office documents (docx, xlsx, pptx)`,
      );
    }
  } else if (facts.utf8Text) {
    const byExt = TEXT_BY_EXT[ext];
    if (!byExt) {
      throw new AttachmentRejected(
        rawName,
        'type_not_allowed',
        `a text file needs a text extension (${Object.keys(TEXT_BY_EXT).join(', ')}); got ${ext ? `.${ext}` : 'none'}`,
      );
    }
    mime = byExt;
  } else {
    throw new AttachmentRejected(
      rawName,
      'type_not_allowed',
      'the bytes match no allowed type (not an image, PDF, Office document or UTF-8 text)',
    );
  }
  const allowed = ALLOWED_TYPES[mime]!;
  if (!allowed.exts.includes(ext)) {
    throw new AttachmentRejected(
      rawName,
      'extension_mismatch',
      `the name says ${ext ? `.${ext}` : 'no extension'} but the bytes are ${mime} (expected .${allowed.exts.join(' or .')})`,
    );
  }
  if (allowed.kind === 'office') checkArchive(rawName, facts, limits);
  return { name, mime, kind: allowed.kind };
}

function checkArchive(rawName: string, facts: InspectedBytes, limits: AttachmentLimits): void {
  const a = facts.archive;
  if (!a) throw new AttachmentRejected(rawName, 'unreadable', 'an Office document must be a readable zip container');
  if (a.names.some((n) => /(^|\/)(vbaProject\.bin|vbaData\.xml)$/i.test(n))) {
    throw new AttachmentRejected(rawName, 'macros', 'the document carries VBA macros (vbaProject.bin)');
  }
  if (a.entries > limits.maxArchiveEntries) {
    throw new AttachmentRejected(
      rawName,
      'archive_bomb',
      `${a.entries} archive entries, over the ${limits.maxArchiveEntries} limit`,
    );
  }
  if (a.uncompressedBytes > limits.maxArchiveUncompressedBytes) {
    throw new AttachmentRejected(
      rawName,
      'archive_bomb',
      `it expands to ${a.uncompressedBytes} bytes, over the ${limits.maxArchiveUncompressedBytes}-byte limit`,
    );
  }
  const ratio = a.uncompressedBytes / Math.max(1, a.compressedBytes);
  if (ratio > limits.maxCompressionRatio) {
    throw new AttachmentRejected(
      rawName,
      'archive_bomb',
      `compression ratio ${ratio.toFixed(0)}:1, over the ${limits.maxCompressionRatio}:1 limit`,
    );
  }
}

/** Turn-level rules over the per-file verdicts: count, total size, distinct names. */
export function checkTurn(
  files: ReadonlyArray<{ rawName: string; name: string; sizeBytes: number }>,
  limits: AttachmentLimits,
): void {
  if (files.length > limits.maxFiles) {
    throw new AttachmentRejected(
      files[limits.maxFiles]!.rawName,
      'file_count',
      `${files.length} files, over the ${limits.maxFiles}-file limit per turn`,
    );
  }
  let total = 0;
  const seen = new Set<string>();
  for (const f of files) {
    total += f.sizeBytes;
    if (total > limits.maxTurnBytes) {
      throw new AttachmentRejected(
        f.rawName,
        'turn_size',
        `the turn's attachments reach ${total} bytes, over the ${limits.maxTurnBytes}-byte limit per turn`,
      );
    }
    const key = f.name.toLowerCase();
    if (seen.has(key))
      throw new AttachmentRejected(
        f.rawName,
        'duplicate_name',
        `another attachment of this turn is already named ${JSON.stringify(f.name)}`,
      );
    seen.add(key);
  }
}
