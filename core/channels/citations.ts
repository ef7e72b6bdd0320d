/**
 * Citation tokens `[[S:1]]`, `[[S:1,3]]`, `[[S:2-4]]` → markdown links or html `<sup class="cite">`.
 *
 * Grammar: `[[` ws `S` ws `:` body `]]`, `S` in either case, full-width `［］：` accepted, body made
 * of digits, commas, spaces and dashes (`-`, `–`, `—`, `−`), at most 64 chars. Ranges may be
 * reversed. Unknown SIDs render plainly as `[S:n]`; a token with no resolvable SID is kept as
 * written. Only http(s) URLs become links (others render as plain titles). Replacement happens
 * on emitted text only; callers keep the raw text.
 */
import { TokenStream, applyRule, isSpace, normChar, type TokenMatch, type TokenRule } from './tokens';
import type { CitationFormat, SourceRef } from './types';

export type { CitationFormat, SourceRef } from './types';

export const MAX_CITATION_BODY = 64;
/** A range spanning more than this many ids is treated as malformed. */
export const MAX_RANGE_SPAN = 1000;

const DASH_RE = /[–—−]/g;

const SINGLE_RE = /^\s*(\d{1,9})\s*$/;
const RANGE_RE = /^(\d{1,9})\s*-\s*(\d{1,9})$/;

/**
 * "1, 3-5" → [1,3,4,5]. Reversed ranges are swapped; malformed parts (and ids over 9 digits) are
 * dropped; duplicates removed, first occurrence wins.
 */
export function parseSidList(body: string): number[] {
  const one = SINGLE_RE.exec(body);
  if (one) return [Number(one[1])];
  const seen = new Set<number>();
  for (const rawPart of body.replace(DASH_RE, '-').split(',')) {
    const part = rawPart.trim();
    const single = SINGLE_RE.exec(part);
    if (single) {
      seen.add(Number(single[1]));
      continue;
    }
    const range = RANGE_RE.exec(part);
    if (!range) continue;
    let a = Number(range[1]);
    let b = Number(range[2]);
    if (a > b) [a, b] = [b, a];
    if (b - a > MAX_RANGE_SPAN) continue;
    for (let n = a; n <= b; n++) seen.add(n);
  }
  return [...seen];
}

function isBodyChar(c: string): boolean {
  return (c >= '0' && c <= '9') || c === ',' || c === '-' || c === '–' || c === '—' || c === '−' || isSpace(c);
}

/** Token matcher at `at` (see the module grammar). */
export function matchCitation(text: string, at: number): TokenMatch {
  const n = text.length;
  let i = at;
  for (let k = 0; k < 2; k++) {
    if (i >= n) return { kind: 'partial', started: false };
    if (normChar(text[i]) !== '[') return { kind: 'none' };
    i++;
  }
  while (i < n && isSpace(text[i])) i++;
  if (i >= n) return { kind: 'partial', started: false };
  if (text[i] !== 'S' && text[i] !== 's') return { kind: 'none' };
  i++;
  while (i < n && isSpace(text[i])) i++;
  if (i >= n) return { kind: 'partial', started: false };
  if (normChar(text[i]) !== ':') return { kind: 'none' };
  i++;
  const bodyStart = i;
  while (i < n && normChar(text[i]) !== ']') {
    if (!isBodyChar(text[i]!) || i - bodyStart >= MAX_CITATION_BODY) return { kind: 'none' };
    i++;
  }
  if (i + 1 >= n) return { kind: 'partial', started: true };
  if (normChar(text[i + 1]) !== ']') return { kind: 'none' };
  return { kind: 'match', length: i + 2 - at };
}

/** Token text → parsed SIDs, shared by the renderers and collectors of one parser. */
export type SidMemo = Map<string, number[]>;
const MAX_MEMO = 4096;

function memoSids(token: string, memo: SidMemo | undefined): number[] {
  if (!memo) return tokenSids(token);
  let sids = memo.get(token);
  if (!sids) {
    sids = tokenSids(token);
    if (memo.size < MAX_MEMO) memo.set(token, sids);
  }
  return sids;
}

/** The id list of a complete token (as matched by `matchCitation`). */
export function tokenSids(token: string): number[] {
  const colon = Math.max(token.indexOf(':'), token.indexOf('：'));
  const body = token.slice(colon + 1).replace(/[\]］]+$/, '');
  return parseSidList(body);
}

export function escapeMarkdownTitle(title: string): string {
  return title.replace(/\r?\n|\r/g, ' ').replace(/[\\[\]|]/g, (c) => `\\${c}`);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** http(s) URLs only; spaces and parentheses percent-encoded so markdown link syntax holds. */
export function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const u = url.trim();
  if (!/^https?:\/\/[^\s]/i.test(u)) return undefined;
  return u.replace(/[ ()<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function label(src: SourceRef): string {
  const t = src.title?.trim();
  return t ? t : (src.url?.trim() ?? `S:${src.sid}`) || `S:${src.sid}`;
}

export type SourceIndex = ReadonlyMap<number, SourceRef>;

/** SID → source; the first row with a SID wins. */
export function sourceIndex(sources: readonly SourceRef[] | SourceIndex): SourceIndex {
  if (sources instanceof Map) return sources;
  const idx = new Map<number, SourceRef>();
  for (const s of sources as readonly SourceRef[]) if (!idx.has(s.sid)) idx.set(s.sid, s);
  return idx;
}

/** A renderer bound to a source list: returns the replacement and records resolved SIDs. */
export class CitationRenderer {
  readonly used = new Set<number>();
  readonly cited = new Set<number>();

  private readonly bySid: ReadonlyMap<number, SourceRef>;

  constructor(
    sources: readonly SourceRef[] | SourceIndex,
    private readonly format: CitationFormat,
  ) {
    this.bySid = sourceIndex(sources);
  }

  private readonly memo = new Map<string, { text: string; sids: number[]; known: number[] }>();

  render(token: string): string {
    let m = this.memo.get(token);
    if (!m) {
      const sids = tokenSids(token);
      const known = sids.filter((sid) => this.bySid.has(sid));
      const text = known.length === 0 ? token : this.format === 'html' ? this.html(sids) : this.markdown(sids);
      m = { text, sids, known };
      if (this.memo.size < 4096) this.memo.set(token, m);
    }
    for (const sid of m.sids) this.cited.add(sid);
    for (const sid of m.known) this.used.add(sid);
    return m.text;
  }

  private markdown(sids: number[]): string {
    return sids
      .map((sid) => {
        const src = this.bySid.get(sid);
        if (!src) return `[S:${sid}]`;
        const text = escapeMarkdownTitle(label(src));
        const url = safeUrl(src.url);
        return url ? `[${text}](${url})` : text;
      })
      .join(' ');
  }

  private html(sids: number[]): string {
    const inner = sids
      .map((sid) => {
        const src = this.bySid.get(sid);
        const url = safeUrl(src?.url);
        if (!src || !url) return `[S:${sid}]`;
        return `<a href="${escapeHtml(url)}" title="${escapeHtml(label(src))}" target="_blank" rel="noopener noreferrer">[S:${sid}]</a>`;
      })
      .join(' ');
    return `<sup class="cite" data-sids="${sids.join(',')}">${inner}</sup>`;
  }
}

function citationRule(renderer: CitationRenderer): TokenRule {
  return { triggers: '[［', match: matchCitation, render: (t) => renderer.render(t) };
}

const sortNum = (xs: Iterable<number>): number[] => [...xs].sort((a, b) => a - b);

/** Replace every token of a complete text. `used` = sorted resolved SIDs. */
export function replaceCitations(
  text: string,
  sources: readonly SourceRef[] | SourceIndex,
  format: CitationFormat,
): { text: string; used: number[]; cited: number[] } {
  const r = new CitationRenderer(sources, format);
  const out = applyRule(citationRule(r), text);
  return { text: out, used: sortNum(r.used), cited: sortNum(r.cited) };
}

/** SIDs cited in a text without rendering anything: `used` resolvable, `cited` all (both sorted). */
export function collectCitations(
  text: string,
  sources: readonly SourceRef[] | SourceIndex,
  memo?: SidMemo,
): { used: number[]; cited: number[] } {
  const idx = sourceIndex(sources);
  const cited = new Set<number>();
  applyRule(
    {
      triggers: '[［',
      match: matchCitation,
      render: (token) => {
        for (const sid of memoSids(token, memo)) cited.add(sid);
        return '';
      },
    },
    text,
  );
  return { used: sortNum([...cited].filter((sid) => idx.has(sid))), cited: sortNum(cited) };
}

/**
 * Streaming replacement: a partial token at the end of a chunk is held back until decided, so a
 * partial `[[S:` is never emitted. On `flush`, a dangling token that got as far as `[[S:` is
 * dropped from the visible text (the raw text keeps it); shorter prefixes such as `[[` are emitted.
 */
export class CitationStream {
  private readonly renderer: CitationRenderer;
  private readonly stream: TokenStream;

  constructor(sources: readonly SourceRef[] | SourceIndex, format: CitationFormat) {
    this.renderer = new CitationRenderer(sources, format);
    this.stream = new TokenStream(citationRule(this.renderer), true);
  }

  push(chunk: string): string {
    return this.stream.push(chunk);
  }

  flush(): string {
    return this.stream.flush();
  }

  /** Sorted SIDs resolved so far. */
  get used(): number[] {
    return sortNum(this.renderer.used);
  }

  /** Sorted SIDs cited so far (resolvable or not). */
  get cited(): number[] {
    return sortNum(this.renderer.cited);
  }
}
