/**
 * Terminal rendering of streamed answer text with resolved citations: `[[S:n]]` tokens are
 * resolved against the known sources (when the stream did not resolve them already), markdown
 * links `[title](url)` become `title[n]`, and `sources()` lists `[n] title — url` at the end.
 * A link or token split across chunks is held back until it is complete.
 */
import { CitationStream, type SourceRef } from '../../core/channels/citations';

const TITLE = String.raw`((?:\\.|[^[\]\\\n]){1,300})`;
const LINK_RE = new RegExp(String.raw`\[${TITLE}\]\((https?:\/\/[^\s)]{1,2000})\)`, 'g');
/** A suffix that may still become a link: `[title`, `[title]`, `[title](http…`. */
const PARTIAL_RE = /^\[(?:\\.|[^[\]\\\n])*\\?(?:\](?:\([^\s)]*)?)?$/;
const MAX_HELD = 2400;

export class AnswerLinks {
  private held = '';
  private readonly numbers = new Map<string, number>();
  private readonly list: Array<{ title: string; url: string }> = [];
  private citations: CitationStream | undefined;

  constructor(
    private readonly known: readonly SourceRef[] = [],
    private readonly mark: (s: string) => string = (s) => s,
  ) {
    this.citations = known.length ? new CitationStream(known, 'markdown') : undefined;
  }

  push(chunk: string): string {
    return this.format(this.held + (this.citations ? this.citations.push(chunk) : chunk), false);
  }

  /** The rest of the text (a dangling partial link is shown as written). Starts a new answer. */
  flush(): string {
    const tail = this.citations ? this.citations.flush() : '';
    const out = this.format(this.held + tail, true);
    this.citations = this.known.length ? new CitationStream(this.known, 'markdown') : undefined;
    return out;
  }

  /** `[n] title — url` lines of the links shown so far (empty when none). */
  sources(): string[] {
    return this.list.map((s, i) => `[${i + 1}] ${s.title === s.url ? s.url : `${s.title} — ${s.url}`}`);
  }

  private link(rawTitle: string, url: string): string {
    const title = rawTitle.replace(/\\(.)/g, '$1');
    let n = this.numbers.get(url);
    if (n === undefined) {
      this.list.push({ title, url });
      n = this.list.length;
      this.numbers.set(url, n);
    }
    return `${title}${this.mark(`[${n}]`)}`;
  }

  private format(text: string, final: boolean): string {
    this.held = '';
    let out = '';
    let at = 0;
    for (const m of text.matchAll(LINK_RE)) {
      out += text.slice(at, m.index) + this.link(m[1]!, m[2]!);
      at = m.index + m[0].length;
    }
    let rest = text.slice(at);
    if (!final) {
      // Hold from the leftmost `[` that may still start a link, as the whole-text match would
      // (e.g. `[\[` must stay together: the second `[` is escaped inside the first's title).
      for (
        let open = rest.indexOf('[', Math.max(0, rest.length - MAX_HELD));
        open >= 0;
        open = rest.indexOf('[', open + 1)
      ) {
        if (PARTIAL_RE.test(rest.slice(open))) {
          this.held = rest.slice(open);
          rest = rest.slice(0, open);
          break;
        }
      }
    }
    return out + rest;
  }
}
