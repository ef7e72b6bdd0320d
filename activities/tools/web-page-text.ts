/**
 * A fetched page as text: which content types are text, HTML → readable plain text
 * (html-to-text, preferring <article>/<main>), the title, the charset, the snippet.
 */
import { convert } from 'html-to-text';

export const HTML_MIMES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_MIMES = new Set([
  'application/json',
  'application/xml',
  'application/ld+json',
  'application/javascript',
  'application/x-yaml',
  'application/yaml',
]);

export function isTextMime(mime: string): boolean {
  return (
    mime.startsWith('text/') ||
    HTML_MIMES.has(mime) ||
    TEXT_MIMES.has(mime) ||
    mime.endsWith('+json') ||
    mime.endsWith('+xml')
  );
}

/** Extracts `<title>` (falls back to og:title, then the first <h1>), entities decoded. */
export function extractTitle(html: string): string {
  const pick =
    /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ??
    /<meta[^>]+property=["']og:title["'][^>]*content=["']([^"']*)["']/i.exec(html)?.[1] ??
    /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  if (!pick) return '';
  return convert(pick, { wordwrap: false }).replace(/\s+/g, ' ').trim();
}

const SKIP_SELECTORS = ['img', 'nav', 'script', 'style', 'noscript', 'svg', 'form', 'template', 'iframe'];
const TEXT_SELECTORS = [
  { selector: 'a', options: { ignoreHref: true } },
  ...SKIP_SELECTORS.map((selector) => ({ selector, format: 'skip' })),
  { selector: 'h1', options: { uppercase: false } },
  { selector: 'h2', options: { uppercase: false } },
  { selector: 'h3', options: { uppercase: false } },
  { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
];
/** Content roots tried in order: the first that yields text wins (boilerplate outside is dropped). */
const CONTENT_ROOTS = ['article', 'main', '[role=main]'];

/** HTML → readable plain text: main/article content when present, no scripts, nav or images. */
export function htmlToReadableText(html: string): string {
  const run = (selectors: string[], returnDomByDefault: boolean): string =>
    convert(html, { wordwrap: false, baseElements: { selectors, returnDomByDefault }, selectors: TEXT_SELECTORS })
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  for (const root of CONTENT_ROOTS) {
    const text = run([root], false);
    if (text) return text;
  }
  return run(['body'], true);
}

export function snippet(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

export function charsetOf(contentType: string): string {
  const m = /charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return m?.[1]?.toLowerCase() ?? 'utf-8';
}

export function decode(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
