/**
 * Per-format content scanners: decide where a `<` can start a live channel tag.
 *
 * - outside channels, unknown channels, `code` and `html`: every `<` is live (backticks never hide
 *   a tag, so `</channel:code>` always closes code).
 * - `markdown` / `text`: tags inside a fence (3+ backticks at the start of a line, after optional
 *   indentation; closed by a run at least as long, anywhere) or inside inline code (any other
 *   backtick run, closed by a run of the same length or by the end of the line) are content. Outside code, `\`` is a literal backtick
 *   and `\\` a literal backslash.
 *   Tilde fences are not recognised.
 * - `json`: tags inside a JSON string (within an object/array, or anywhere inside a fence) are
 *   content; a stray quote in prose around unfenced JSON starts no string. If the body is fenced (starts with 3+
 *   backticks), tags anywhere inside the fence are content until the closing backtick run
 *   (outside strings) or until the top-level value is complete — so a missing closing fence does
 *   not swallow the next channel.
 *
 * `scan` consumes content from `start`, updating state, and stops at a live `<` (not consumed),
 * at the end of the text, or where it needs more text to decide (`more`).
 */
import type { ChannelFormat } from './types';

export interface ScanResult {
  stop: number;
  reason: 'tag' | 'end' | 'more';
}

export interface ContentScanner {
  scan(text: string, start: number, final: boolean): ScanResult;
}

const BT = 96; // `
const LT = 60; // <

/** Index of the next match of a global regex at or after `from`, or `n` when none. */
function skipTo(re: RegExp, text: string, from: number): number {
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? m.index : text.length;
}

const MD_NORMAL = /[<\\`\n]/g;
const MD_CODE = /[`\n]/g;
const JSON_STRING = /["\\]/g;
const JSON_OUTSIDE = /[<"`{}[\]]/g;

const isBlank = (c: number): boolean => c === 32 || c === 9;

/** Length of the backtick run at `i`, or -1 when it reaches the end of a non-final text. */
function runLength(text: string, i: number, final: boolean): number {
  let j = i;
  while (j < text.length && text.charCodeAt(j) === BT) j++;
  if (j >= text.length && !final) return -1;
  return j - i;
}

export class RawScanner implements ContentScanner {
  scan(text: string, start: number): ScanResult {
    const j = text.indexOf('<', start);
    return j < 0 ? { stop: text.length, reason: 'end' } : { stop: j, reason: 'tag' };
  }
}

export class MarkdownScanner implements ContentScanner {
  /** 0 = normal, otherwise the length of the open inline span or fence. */
  private open = 0;
  private fence = false;
  /** Only spaces/tabs since the start of the line (or of the channel). */
  private lineStart = true;

  scan(text: string, start: number, final: boolean): ScanResult {
    let i = start;
    const n = text.length;
    while (i < n) {
      if (this.open === 0) {
        const k = skipTo(MD_NORMAL, text, i);
        if (this.lineStart) for (let j = i; j < k && this.lineStart; j++) this.lineStart = isBlank(text.charCodeAt(j));
        i = k;
        if (i >= n) break;
        const c = text.charCodeAt(i);
        if (c === 10) {
          this.lineStart = true;
          i++;
          continue;
        }
        if (c === LT) {
          this.lineStart = false;
          return { stop: i, reason: 'tag' };
        }
        if (c === 92 /* \ */) {
          if (i + 1 >= n && !final) return { stop: i, reason: 'more' };
          const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
          i += next === BT || next === 92 ? 2 : 1;
          this.lineStart = false;
          continue;
        }
        // backtick run: a fence at the start of a line (3+), otherwise an inline span
        const len = runLength(text, i, final);
        if (len < 0) return { stop: i, reason: 'more' };
        this.open = len;
        this.fence = len >= 3 && this.lineStart;
        this.lineStart = false;
        i += len;
        continue;
      }
      i = skipTo(MD_CODE, text, i);
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === BT) {
        const len = runLength(text, i, final);
        if (len < 0) return { stop: i, reason: 'more' };
        if (this.fence ? len >= this.open : len === this.open) this.open = 0;
        i += len;
        continue;
      }
      // newline: ends an inline span
      if (!this.fence) this.open = 0;
      this.lineStart = true;
      i++;
    }
    return { stop: n, reason: 'end' };
  }
}

export class JsonScanner implements ContentScanner {
  private started = false; // first non-space char seen
  private fenced = false;
  private fenceOpen = false;
  private fenceLen = 0;
  private inString = false;
  private escape = false;
  private depth = 0;
  private valueStarted = false;

  private live(): boolean {
    if (this.inString) return false;
    if (!this.fenced || !this.fenceOpen) return true;
    return this.valueStarted && this.depth === 0;
  }

  scan(text: string, start: number, final: boolean): ScanResult {
    let i = start;
    const n = text.length;
    while (i < n) {
      if (this.inString && !this.escape) {
        i = skipTo(JSON_STRING, text, i);
        if (i >= n) break;
      } else if (!this.inString && this.started) {
        i = skipTo(JSON_OUTSIDE, text, i);
        if (i >= n) break;
      }
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === 92) this.escape = true;
        else if (c === 34 /* " */) {
          this.inString = false;
          if (this.depth === 0) this.valueStarted = true;
        }
        i++;
        continue;
      }
      if (c === LT) {
        if (this.live()) return { stop: i, reason: 'tag' };
        i++;
        continue;
      }
      if (!this.started) {
        if (c === 32 || c === 9 || c === 10 || c === 13) {
          i++;
          continue;
        }
        if (c === BT) {
          const len = runLength(text, i, final);
          if (len < 0) return { stop: i, reason: 'more' };
          this.started = true;
          if (len >= 3) {
            this.fenced = true;
            this.fenceOpen = true;
            this.fenceLen = len;
          }
          i += len;
          continue;
        }
        this.started = true;
      }
      if (c === BT && this.fenceOpen) {
        const len = runLength(text, i, final);
        if (len < 0) return { stop: i, reason: 'more' };
        if (len >= this.fenceLen) this.fenceOpen = false;
        i += len;
        continue;
      }
      if (c === 34) {
        // Strings count inside a container or a fence; a stray quote in prose around unfenced JSON does not.
        if (this.depth > 0 || this.fenceOpen) this.inString = true;
      } else if (c === 123 || c === 91 /* { [ */) {
        this.depth++;
        this.valueStarted = true;
      } else if ((c === 125 || c === 93) /* } ] */ && this.depth > 0) this.depth--;
      i++;
    }
    return { stop: n, reason: 'end' };
  }
}

export function scannerFor(format: ChannelFormat): ContentScanner {
  if (format === 'markdown' || format === 'text') return new MarkdownScanner();
  if (format === 'json') return new JsonScanner();
  return new RawScanner();
}
