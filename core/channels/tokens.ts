/**
 * Split-safe token streaming: a small engine shared by citation replacement and `[[USAGE:…]]`
 * stripping, plus invisible-character stripping.
 *
 * A matcher inspects the text at a trigger character and answers `match` (token length),
 * `none` (not a token: the trigger is ordinary text) or `partial` (the text ends before a
 * decision). Decisions depend only on the characters, never on chunk boundaries, so any
 * chunking of the same text yields the same concatenated output.
 */

export type TokenMatch =
  | { kind: 'match'; length: number }
  | { kind: 'none' }
  /** The text ended before a decision; `started` says whether the token's mandatory prefix was seen. */
  | { kind: 'partial'; started: boolean };

export type TokenMatcher = (text: string, at: number) => TokenMatch;

export interface TokenRule {
  /** Characters that can start a token. */
  triggers: string;
  match: TokenMatcher;
  render(token: string): string;
}

/**
 * Incremental transformer. `push` returns text that is safe to emit now (a possible token
 * prefix at the end is held back); `flush` ends the stream: a dangling token whose mandatory
 * prefix was seen is dropped when `dropDangling`, otherwise emitted as written.
 */
export class TokenStream {
  private pending = '';

  constructor(
    private readonly rule: TokenRule,
    private readonly dropDangling: boolean,
  ) {}

  push(chunk: string): string {
    this.pending += chunk;
    return this.drain(false);
  }

  flush(): string {
    return this.drain(true);
  }

  /** Text currently held back. */
  get held(): string {
    return this.pending;
  }

  private drain(final: boolean): string {
    const text = this.pending;
    if (text === '') return '';
    const finder = new TriggerFinder(text, this.rule.triggers);
    let out = '';
    let i = 0;
    while (i < text.length) {
      const j = finder.next(i);
      if (j < 0) {
        out += i === 0 ? text : text.slice(i);
        i = text.length;
        break;
      }
      if (j > i) out += text.slice(i, j);
      i = j;
      const m = this.rule.match(text, i);
      if (m.kind === 'match') {
        out += this.rule.render(text.slice(i, i + m.length));
        i += m.length;
      } else if (m.kind === 'none') {
        out += text[i];
        i += 1;
      } else if (!final) {
        break;
      } else if (m.started && this.dropDangling) {
        i = text.length;
      } else {
        out += text[i];
        i += 1;
      }
    }
    this.pending = i === 0 ? text : text.slice(i);
    return out;
  }
}

/** Next index of either trigger char (at most two) at or after a position; positions cached, so linear overall. */
class TriggerFinder {
  private a = -2;
  private b = -2;
  private readonly ta: string;
  private readonly tb: string;

  constructor(
    private readonly text: string,
    triggers: string,
  ) {
    if (triggers.length < 1 || triggers.length > 2)
      throw new Error(`token triggers must be 1 or 2 chars, got ${JSON.stringify(triggers)}`);
    this.ta = triggers[0]!;
    this.tb = triggers[1] ?? '';
    if (!this.tb) this.b = -1;
  }

  next(from: number): number {
    if (this.a !== -1 && this.a < from) this.a = this.text.indexOf(this.ta, from);
    if (this.b !== -1 && this.b < from) this.b = this.text.indexOf(this.tb, from);
    if (this.a < 0) return this.b;
    if (this.b < 0) return this.a;
    return this.a < this.b ? this.a : this.b;
  }
}

/** Apply a rule to a complete text (dangling prefixes kept as written). */
export function applyRule(rule: TokenRule, text: string): string {
  const s = new TokenStream(rule, false);
  return s.push(text) + s.flush();
}

/**
 * Zero-width (U+200B-U+200D, U+2060), BOM (U+FEFF) and bidi controls (U+200E/F, U+061C,
 * U+202A-U+202E, U+2066-U+2069). Note that stripping U+200D splits joined emoji sequences.
 */
const INVISIBLE_RE = /[\u200B-\u200F\u2060\uFEFF\u061C\u202A-\u202E\u2066-\u2069]/g;

export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE_RE, '');
}

/** Full-width brackets/colon normalised to ASCII, one code unit each. */
export function normChar(c: string | undefined): string | undefined {
  if (c === '［') return '[';
  if (c === '］') return ']';
  if (c === '：') return ':';
  return c;
}

export function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\u00A0' || c === '\u3000';
}

export const MAX_USAGE_BODY = 256;

/** `[[USAGE:…]]` (case-insensitive, spaces allowed around the keyword); the body has no `]` or newline. */
export const matchUsage: TokenMatcher = (text, at) => {
  let i = at;
  const n = text.length;
  const need = (): TokenMatch => ({ kind: 'partial', started: false });
  for (const want of ['[', '[']) {
    if (i >= n) return need();
    if (normChar(text[i]) !== want) return { kind: 'none' };
    i++;
  }
  while (i < n && isSpace(text[i])) i++;
  for (const want of 'USAGE') {
    if (i >= n) return need();
    if (text[i]!.toUpperCase() !== want) return { kind: 'none' };
    i++;
  }
  while (i < n && isSpace(text[i])) i++;
  if (i >= n) return need();
  if (normChar(text[i]) !== ':') return { kind: 'none' };
  i++;
  const bodyStart = i;
  while (i < n) {
    const c = normChar(text[i]);
    if (c === ']') break;
    if (c === '\n' || i - bodyStart >= MAX_USAGE_BODY) return { kind: 'none' };
    i++;
  }
  if (i >= n) return { kind: 'partial', started: true };
  i++;
  if (i >= n) return { kind: 'partial', started: true };
  if (normChar(text[i]) !== ']') return { kind: 'none' };
  return { kind: 'match', length: i + 1 - at };
};

export const USAGE_RULE: TokenRule = { triggers: '[［', match: matchUsage, render: () => '' };
