/**
 * Composite JSON streamer: while a json channel streams a top-level object, emit each attribute
 * as soon as its value is complete (before the object closes), and stream string values
 * piecewise as they arrive. Only top-level keys are reported; nested values arrive whole.
 *
 * A leading ``` fence with an info word is skipped. Input that is not an object turns the
 * streamer off (the channel result reports the parse error).
 */
import { escapeControlsInStrings } from './json';

export type CompositeOut =
  | { kind: 'attribute'; key: string; value: unknown }
  | { kind: 'attribute-delta'; key: string; text: string };

type Phase = 'start' | 'key' | 'keystr' | 'colon' | 'value' | 'vstr' | 'vnest' | 'vprim' | 'done' | 'off';

const STRING_STOP = /["\\]/g;

const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

function decodeStringPiece(raw: string): string {
  return JSON.parse(`"${escapeControlsInStrings(`"${raw}`).slice(1)}"`) as string;
}

export class CompositeJsonStreamer {
  private buf = '';
  private i = 0;
  private phase: Phase = 'start';
  private tokenStart = 0;
  private key = '';
  private depth = 0;
  private inString = false;
  private escape = false;
  /** vstr: index of the first raw char not yet streamed as an attribute-delta. */
  private streamed = 0;

  push(chunk: string): CompositeOut[] {
    this.buf += chunk;
    const out: CompositeOut[] = [];
    this.run(out, false);
    return out;
  }

  /** End of instance: a trailing primitive (no delimiter yet) completes here. */
  finish(): CompositeOut[] {
    const out: CompositeOut[] = [];
    this.run(out, true);
    if (this.phase === 'vprim') this.complete(this.buf.length, out);
    this.phase = 'done';
    return out;
  }

  private complete(end: number, out: CompositeOut[]): void {
    const raw = this.buf.slice(this.tokenStart, end);
    try {
      out.push({ kind: 'attribute', key: this.key, value: JSON.parse(escapeControlsInStrings(raw)) });
      this.phase = 'key';
    } catch {
      // Malformed attribute: stop here; the channel result carries the JSON parse error.
      this.phase = 'off';
    }
  }

  private run(out: CompositeOut[], final: boolean): void {
    const b = this.buf;
    const n = b.length;
    let i = this.i;
    while (i < n && this.phase !== 'done' && this.phase !== 'off') {
      const c = b.charCodeAt(i);
      switch (this.phase) {
        case 'start':
          if (c === 123) this.phase = 'key';
          else if (!(isWs(c) || c === 96 || /[A-Za-z0-9_+-]/.test(b[i]!))) this.phase = 'off';
          i++;
          break;
        case 'key':
          if (c === 34) {
            this.phase = 'keystr';
            this.tokenStart = i;
            this.escape = false;
          } else if (c === 125) this.phase = 'done';
          else if (!(isWs(c) || c === 44)) this.phase = 'off';
          i++;
          break;
        case 'keystr':
          if (this.escape) this.escape = false;
          else if (c === 92) this.escape = true;
          else if (c === 34) {
            try {
              this.key = JSON.parse(escapeControlsInStrings(b.slice(this.tokenStart, i + 1))) as string;
              this.phase = 'colon';
            } catch {
              this.phase = 'off';
            }
          }
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
          this.tokenStart = i;
          if (c === 34) {
            this.phase = 'vstr';
            this.escape = false;
            this.streamed = i + 1;
          } else if (c === 123 || c === 91) {
            this.phase = 'vnest';
            this.depth = 1;
            this.inString = false;
            this.escape = false;
          } else this.phase = 'vprim';
          i++;
          break;
        case 'vstr':
          if (!this.escape) {
            STRING_STOP.lastIndex = i;
            const m = STRING_STOP.exec(b);
            if (!m) {
              i = n;
              break;
            }
            i = m.index;
          }
          if (this.escape) this.escape = false;
          else if (b.charCodeAt(i) === 92) this.escape = true;
          else {
            this.emitPiece(i, out);
            this.complete(i + 1, out);
          }
          i++;
          break;
        case 'vnest':
          if (this.inString) {
            if (this.escape) this.escape = false;
            else if (c === 92) this.escape = true;
            else if (c === 34) this.inString = false;
          } else if (c === 34) this.inString = true;
          else if (c === 123 || c === 91) this.depth++;
          else if (c === 125 || c === 93) {
            this.depth--;
            if (this.depth === 0) this.complete(i + 1, out);
          }
          i++;
          break;
        case 'vprim':
          if (isWs(c) || c === 44 || c === 125) {
            this.complete(i, out);
            if (c === 125 && (this.phase as Phase) === 'key') this.phase = 'done';
          }
          i++;
          break;
      }
    }
    this.i = i;
    if (this.phase === 'vstr' && !final) this.emitPiece(this.safeStringEnd(), out);
  }

  /** End of the decodable prefix of the open string: excludes a trailing partial escape. */
  private safeStringEnd(): number {
    let end = this.i;
    const b = this.buf;
    // Walk back over a possibly incomplete escape sequence (`\`, `\u`, `\u1`, `\u12`, `\u123`).
    for (let k = Math.max(this.streamed, end - 6); k < end; k++) {
      if (b[k] !== '\\') continue;
      let slashes = 1;
      while (k - slashes >= this.streamed && b[k - slashes] === '\\') slashes++;
      if (slashes % 2 === 0) continue;
      const need = b[k + 1] === 'u' ? 6 : 2;
      if (k + need > end) {
        end = k;
        break;
      }
    }
    // Never split a surrogate pair.
    const last = b.charCodeAt(end - 1);
    if (end > this.streamed && last >= 0xd800 && last <= 0xdbff) end--;
    return end;
  }

  private emitPiece(end: number, out: CompositeOut[]): void {
    if (end <= this.streamed) return;
    const raw = this.buf.slice(this.streamed, end);
    this.streamed = end;
    try {
      const text = decodeStringPiece(raw);
      if (text) out.push({ kind: 'attribute-delta', key: this.key, text });
    } catch {
      // Invalid escape inside the string: the completed attribute reports it by its absence.
    }
  }
}
