/**
 * Composite JSON streamer: while a json channel streams a top-level object, emit each attribute
 * as soon as its value is complete (before the object closes), and stream top-level string values
 * piecewise as they arrive. Only top-level keys are reported; nested values arrive whole.
 *
 * A leading ``` fence with an info word is skipped. Input that is not an object turns the
 * streamer off (the channel result reports the parse error). Work is linear in the input:
 * each chunk is scanned once and only the current token is kept.
 */
import { escapeControlsInStrings } from './json';

export type CompositeOut =
  { kind: 'attribute'; key: string; value: unknown } | { kind: 'attribute-delta'; key: string; text: string };

type Phase = 'start' | 'key' | 'keystr' | 'colon' | 'value' | 'vstr' | 'vnest' | 'vprim' | 'done' | 'off';

const STRING_STOP = /["\\]/g;
const NEST_STOP = /["{}[\]]/g;
const PRIM_STOP = /[\s,}\]]/g;
const FENCE_CHAR = /[\s`A-Za-z0-9_+-]/;

const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

function find(re: RegExp, text: string, from: number): number {
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? m.index : -1;
}

function parseToken(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(escapeControlsInStrings(raw)) };
  } catch {
    // Malformed token: the caller turns the streamer off; the channel result carries the JSON error.
    return { ok: false };
  }
}

export class CompositeJsonStreamer {
  private phase: Phase = 'start';
  private key = '';
  /** Raw text of the key or value being read. */
  private capture = '';
  private depth = 0;
  private inString = false;
  private escape = false;
  /** vstr: raw string content not yet streamed as an attribute-delta. */
  private undecoded = '';

  push(chunk: string): CompositeOut[] {
    const out: CompositeOut[] = [];
    this.run(chunk, out);
    if (this.phase === 'vstr') this.stream(false, out);
    return out;
  }

  /** End of instance: a trailing primitive (no delimiter yet) completes here. */
  finish(): CompositeOut[] {
    const out: CompositeOut[] = [];
    if (this.phase === 'vprim') this.complete(out);
    this.phase = 'done';
    return out;
  }

  private complete(out: CompositeOut[]): void {
    const p = parseToken(this.capture);
    this.capture = '';
    if (!p.ok) {
      this.phase = 'off';
      return;
    }
    out.push({ kind: 'attribute', key: this.key, value: p.value });
    this.phase = 'key';
  }

  private run(b: string, out: CompositeOut[]): void {
    const n = b.length;
    let i = 0;
    while (i < n && this.phase !== 'done' && this.phase !== 'off') {
      const c = b.charCodeAt(i);
      switch (this.phase) {
        case 'start':
          if (c === 123) this.phase = 'key';
          else if (!FENCE_CHAR.test(b[i]!)) this.phase = 'off';
          i++;
          break;
        case 'key':
          if (c === 34) {
            this.phase = 'keystr';
            this.capture = '"';
            this.escape = false;
          } else if (c === 125) this.phase = 'done';
          else if (!(isWs(c) || c === 44)) this.phase = 'off';
          i++;
          break;
        case 'colon':
          if (c === 58) this.phase = 'value';
          else if (!isWs(c)) this.phase = 'off';
          i++;
          break;
        case 'value':
          if (isWs(c)) {
            i++;
            break;
          }
          this.capture = '';
          this.escape = false;
          if (c === 34) {
            this.phase = 'vstr';
            this.capture = '"';
            this.undecoded = '';
            i++;
          } else if (c === 123 || c === 91) {
            this.phase = 'vnest';
            this.depth = 0;
            this.inString = false;
          } else this.phase = 'vprim';
          break;
        case 'keystr':
        case 'vstr':
          i = this.readString(b, i, out);
          break;
        case 'vnest':
          i = this.readNested(b, i, out);
          break;
        case 'vprim': {
          const end = find(PRIM_STOP, b, i);
          if (end < 0) {
            this.capture += b.slice(i);
            i = n;
            break;
          }
          this.capture += b.slice(i, end);
          this.complete(out);
          if (b.charCodeAt(end) === 125 && (this.phase as Phase) === 'key') this.phase = 'done';
          i = end + 1;
          break;
        }
      }
    }
  }

  /** Scan a string token from `i`; returns the index after what was consumed. */
  private readString(b: string, i: number, out: CompositeOut[]): number {
    const start = i;
    const n = b.length;
    while (i < n) {
      if (this.escape) {
        this.escape = false;
        i++;
        continue;
      }
      const k = find(STRING_STOP, b, i);
      if (k < 0) {
        i = n;
        break;
      }
      if (b.charCodeAt(k) === 92) {
        this.escape = true;
        i = k + 1;
        continue;
      }
      // closing quote at k
      this.capture += b.slice(start, k + 1);
      if (this.phase === 'keystr') {
        const p = parseToken(this.capture);
        this.capture = '';
        if (p.ok && typeof p.value === 'string') {
          this.key = p.value;
          this.phase = 'colon';
        } else this.phase = 'off';
      } else {
        this.undecoded += b.slice(start, k);
        this.stream(true, out);
        this.complete(out);
      }
      return k + 1;
    }
    this.capture += b.slice(start, n);
    if (this.phase === 'vstr') this.undecoded += b.slice(start, n);
    return n;
  }

  private readNested(b: string, i: number, out: CompositeOut[]): number {
    const start = i;
    const n = b.length;
    while (i < n) {
      if (this.inString) {
        if (this.escape) {
          this.escape = false;
          i++;
          continue;
        }
        const k = find(STRING_STOP, b, i);
        if (k < 0) return this.keep(b, start);
        if (b.charCodeAt(k) === 92) this.escape = true;
        else this.inString = false;
        i = k + 1;
        continue;
      }
      const k = find(NEST_STOP, b, i);
      if (k < 0) return this.keep(b, start);
      const c = b.charCodeAt(k);
      if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) this.depth++;
      else if (--this.depth === 0) {
        this.capture += b.slice(start, k + 1);
        this.complete(out);
        return k + 1;
      }
      i = k + 1;
    }
    return this.keep(b, start);
  }

  private keep(b: string, start: number): number {
    this.capture += b.slice(start);
    return b.length;
  }

  /** Stream the decodable prefix of `undecoded` (all of it when the string closed). */
  private stream(closed: boolean, out: CompositeOut[]): void {
    const u = this.undecoded;
    if (!u) return;
    let end = u.length;
    if (!closed) {
      // Hold back an incomplete escape (`\`, `\u`, …, `\u123`) at the end.
      const slash = u.lastIndexOf('\\', end - 1);
      if (slash >= 0 && slash >= end - 6) {
        let run = 1;
        while (slash - run >= 0 && u[slash - run] === '\\') run++;
        if (run % 2 === 1) {
          const need = u[slash + 1] === 'u' ? 6 : 2;
          if (slash + need > end) end = slash;
        }
      }
      const last = u.charCodeAt(end - 1);
      if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
    }
    if (end <= 0) return;
    const piece = u.slice(0, end);
    this.undecoded = u.slice(end);
    const p = parseToken(`"${piece}"`);
    if (p.ok && typeof p.value === 'string' && p.value)
      out.push({ kind: 'attribute-delta', key: this.key, text: p.value });
  }
}
