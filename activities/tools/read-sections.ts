/**
 * react.read's output sections: caps, statuses and the `[READ]` / `[READ PREVIEW]` /
 * `[READ RANGE]` sections of a loaded document.
 */
import type { Block } from '../../core/timeline/block';
import type { IncomingSourceRow } from '../../core/timeline/sources';

/** Per-path cap on returned text (≈ 12,000 tokens). */
export const READ_MAX_TEXT_SYMBOLS = 48_000;
/** Hard ceiling for a caller-supplied max_text_symbols. */
export const READ_MAX_TEXT_SYMBOLS_CEILING = 200_000;
/** Per-field cap (text / content) of sources-pool rows when the call gives no max_text_symbols. */
export const READ_SOURCE_FIELD_SYMBOLS = 4_000;
/** Files larger than this are never materialized. */
export const READ_MAX_BYTES = 10 * 1024 * 1024;

export type ReadStatus =
  | 'ok'
  | 'missing'
  | 'error'
  | 'already_visible'
  | 'truncated_for_visible_context'
  | 'too_large_for_visible_context_bytes'
  | 'range_out_of_bounds'
  | 'binary'
  | 'attached';

export interface ReadItem {
  path: string;
  line_start?: number;
  line_count?: number;
  offset_text_symbols?: number;
  max_text_symbols?: number;
  line_numbers?: boolean;
}

export interface Loaded {
  canonical: string;
  text: string;
  bytes: number;
  mime: string;
  /** Blocks backing the path (for the visibility check). */
  blocks: Block[];
  binary?: boolean;
  /** An image or PDF the model gets as a content block of its next request (react.read attaches it). */
  media?: { mime: string; base64: string };
  /** Already bounded field by field (sources pool) or never capped (skills): not cut by max_text_symbols. */
  fieldCapped?: boolean;
  /** Rows this read adds to the sources pool (a skill's sources), with call-local SIDs. */
  sources?: IncomingSourceRow[];
}

export interface ReadResult {
  path: string;
  status: ReadStatus;
  canonical?: string;
  chars?: number;
  lines?: number;
  bytes?: number;
  mime?: string;
  range?: string;
  error?: string;
}

const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${line}`;

export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function capOf(...caps: Array<number | undefined>): number {
  const given = caps.find((c) => c !== undefined);
  return Math.min(given ?? READ_MAX_TEXT_SYMBOLS, READ_MAX_TEXT_SYMBOLS_CEILING);
}

/** Full read: the content, a bounded preview, or nothing when already visible. */
export function fullSection(
  path: string,
  doc: Loaded,
  cap: number,
  lineNumbers: boolean,
  visible: boolean,
): { result: ReadResult; section?: string } {
  const base: ReadResult = {
    path,
    status: 'ok',
    canonical: doc.canonical,
    chars: doc.text.length,
    lines: lineCount(doc.text),
    bytes: doc.bytes,
    mime: doc.mime,
  };
  if (doc.binary) return { result: { ...base, status: 'binary', error: 'binary payload; not readable as text' } };
  if (doc.bytes > READ_MAX_BYTES) {
    return {
      result: { ...base, status: 'too_large_for_visible_context_bytes' },
      section: `[LARGE READ NOT MATERIALIZED] ${doc.canonical}: ${doc.bytes} bytes exceed ${READ_MAX_BYTES}; read line ranges with items instead.`,
    };
  }
  if (visible) return { result: { ...base, status: 'already_visible' } };
  const body = lineNumbers
    ? splitLines(doc.text)
        .map((l, i) => numbered(i + 1, l))
        .join('\n')
    : doc.text;
  if (body.length <= cap)
    return {
      result: base,
      section: `[READ] ${doc.canonical} (${doc.text.length} chars, ${base.lines} lines)\n${body}`,
    };
  const head = body.slice(0, cap);
  const shownLines = lineCount(doc.text.slice(0, cap));
  const hint = `read more with items: [{"path": ${JSON.stringify(doc.canonical)}, "line_start": ${Math.max(1, shownLines)}, "line_count": 200}]`;
  return {
    result: { ...base, status: 'truncated_for_visible_context' },
    section: `[READ PREVIEW] ${doc.canonical} (showing ${cap} of ${body.length} chars, ${base.lines} lines; ${hint})\n${head}\n[READ PREVIEW TRUNCATED]`,
  };
}

/** Ranged read: lines [s-e] (always numbered) or a character window. */
export function rangeSection(item: ReadItem, doc: Loaded, cap: number): { result: ReadResult; section?: string } {
  const lines = splitLines(doc.text);
  const base: ReadResult = {
    path: item.path,
    status: 'ok',
    canonical: doc.canonical,
    chars: doc.text.length,
    lines: lines.length,
    bytes: doc.bytes,
    mime: doc.mime,
  };
  if (doc.binary) return { result: { ...base, status: 'binary', error: 'binary payload; not readable as text' } };
  if (item.line_start !== undefined || item.line_count !== undefined) {
    const start = item.line_start ?? 1;
    if (start > lines.length) {
      return {
        result: {
          ...base,
          status: 'range_out_of_bounds',
          error: `line_start ${start} is past the end (${lines.length} lines)`,
        },
      };
    }
    const end = Math.min(lines.length, item.line_count === undefined ? lines.length : start + item.line_count - 1);
    let body = lines
      .slice(start - 1, end)
      .map((l, i) => numbered(start + i, l))
      .join('\n');
    let status: ReadStatus = 'ok';
    if (body.length > cap) {
      body = `${body.slice(0, cap)}\n[READ RANGE TRUNCATED at ${cap} chars; ask for fewer lines]`;
      status = 'truncated_for_visible_context';
    }
    const range = `${start}-${end}`;
    return {
      result: { ...base, status, range },
      section: `[READ RANGE] ${doc.canonical} lines: [${range}]/${lines.length}\n${body}`,
    };
  }
  const offset = item.offset_text_symbols ?? 0;
  if (offset > doc.text.length) {
    return {
      result: {
        ...base,
        status: 'range_out_of_bounds',
        error: `offset_text_symbols ${offset} is past the end (${doc.text.length} chars)`,
      },
    };
  }
  const end = Math.min(doc.text.length, offset + cap);
  const slice = doc.text.slice(offset, end);
  const firstLine = lineCount(doc.text.slice(0, offset)) + (offset === 0 || doc.text[offset - 1] === '\n' ? 1 : 0);
  const body = item.line_numbers
    ? splitLines(slice)
        .map((l, i) => numbered(firstLine + i, l))
        .join('\n')
    : slice;
  const range = `${offset}-${end}`;
  return {
    result: { ...base, status: end < doc.text.length ? 'truncated_for_visible_context' : 'ok', range },
    section: `[READ RANGE] ${doc.canonical} chars: [${range}]/${doc.text.length}\n${body}`,
  };
}
