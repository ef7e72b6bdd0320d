/**
 * Markdown to sanitised HTML for answers and Markdown canvases (marked, then DOMPurify), with the
 * answer's `[[S:n]]` citations as links to the sources panel, and code blocks highlighted
 * (highlight.js core with a few languages). Nothing the model writes runs as script here.
 */
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import python from 'highlight.js/lib/languages/python';
import javascript from 'highlight.js/lib/languages/javascript';
import typescript from 'highlight.js/lib/languages/typescript';
import json from 'highlight.js/lib/languages/json';
import bash from 'highlight.js/lib/languages/bash';
import sql from 'highlight.js/lib/languages/sql';
import xml from 'highlight.js/lib/languages/xml';
import css from 'highlight.js/lib/languages/css';

for (const [name, lang] of Object.entries({ python, javascript, typescript, json, bash, sql, xml, css }))
  hljs.registerLanguage(name, lang);
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['js', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['sh', 'shell'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Highlighted HTML of a code text (escaped plain text for a language not registered). */
export function highlight(code: string, lang: string | undefined): string {
  const l = lang && hljs.getLanguage(lang) ? lang : undefined;
  return l ? hljs.highlight(code, { language: l, ignoreIllegals: true }).value : escapeHtml(code);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const l = (lang ?? '').split(/\s/)[0]?.toLowerCase();
      return `<pre class="code" tabindex="0"><code class="hljs${l ? ` language-${escapeHtml(l)}` : ''}">${highlight(text, l)}</code></pre>\n`;
    },
  },
});

/** The SIDs of one `[[S:…]]` token (`1`, `1,3`, `2-4`). */
function tokenSids(body: string): number[] {
  const out: number[] = [];
  for (const part of body.split(',')) {
    const [a, b] = part.split('-').map((x) => Number(x.trim()));
    if (a === undefined || !Number.isInteger(a)) continue;
    if (b !== undefined && Number.isInteger(b) && b >= a && b - a < 50) for (let n = a; n <= b; n++) out.push(n);
    else out.push(a);
  }
  return out;
}

/**
 * `[[S:n]]` markers as citation links; `known` the SIDs that resolve (a completion's
 * `meta.sources_used`, or the pool): other markers stay as the model wrote them, as the live
 * stream leaves them.
 */
export function citationHtml(text: string, known: ReadonlySet<number>): string {
  return text.replace(/\[\[S:([0-9,\s-]+)\]\]/g, (token, body: string) => {
    const sids = tokenSids(body).filter((n) => known.has(n));
    if (sids.length === 0) return token;
    const links = sids.map((n) => `<a href="#source-${n}" data-sid="${n}">[${n}]</a>`).join('');
    return `<sup class="cite">${links}</sup>`;
  });
}

const PURIFY = { ADD_ATTR: ['target'], FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe'] };

// Links the model wrote open in a new tab; in-page citation links stay.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && !(node.getAttribute('href') ?? '').startsWith('#')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Sanitised HTML of a Markdown text, citations linked when `known` is given. */
export function renderMarkdown(text: string, known?: ReadonlySet<number>): string {
  const src = known ? citationHtml(text, known) : text;
  return DOMPurify.sanitize(marked.parse(src, { async: false }), PURIFY);
}
