/** Markdown rendered and sanitised (markdown.ts); `known`: the SIDs whose `[[S:n]]` markers link. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { renderMarkdown } from '../markdown';
import { copyText } from './copy-button';

/** Each code block gets a Copy button (added to the rendered HTML; one click handler for all). */
function addCodeCopyButtons(root: HTMLElement): void {
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    if (pre.querySelector(':scope > .copy-code')) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'text-button copy-code';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy code');
    pre.prepend(button);
  }
}

function onCodeCopy(e: MouseEvent): void {
  const button = (e.target as HTMLElement).closest('.copy-code');
  const code = button?.parentElement?.querySelector('code') ?? button?.parentElement;
  if (!button || !code) return;
  const text = code === button.parentElement ? (code.textContent ?? '').replace(/^Copy(ied)?/, '') : code.textContent;
  void copyText(text ?? '').then(
    () => (button.textContent = 'Copied'),
    () => (button.textContent = 'Copy failed'),
  );
}

/**
 * While a text streams, the value rendered at most every `ms` (the latest one wins): parsing a
 * growing document on every delta is quadratic. A finished text renders at once.
 */
export function useThrottled(value: string, ms: number, live: boolean): string {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    if (!live) return;
    const wait = last.current + ms - performance.now();
    const show = () => {
      last.current = performance.now();
      setShown(value);
    };
    if (wait <= 0) return show();
    const t = setTimeout(show, wait);
    return () => clearTimeout(t);
  }, [value, live]);
  return live ? shown : value;
}

export function Markdown({
  text,
  known,
  class: cls,
  tabIndex,
  live = false,
  throttleMs = 100,
}: {
  text: string;
  known?: ReadonlySet<number>;
  class?: string;
  /** 0 for a scrolling canvas (keyboard users can scroll it). */
  tabIndex?: number;
  /** Still streaming: render throttled. */
  live?: boolean;
  throttleMs?: number;
}) {
  const shown = useThrottled(text, throttleMs, live);
  const html = useMemo(() => renderMarkdown(shown, known), [shown, known]);
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (root.current) addCodeCopyButtons(root.current);
  }, [html]);
  return (
    <div
      ref={root}
      onClick={onCodeCopy}
      class={cls ? `md ${cls}` : 'md'}
      {...(tabIndex !== undefined ? { tabIndex } : {})}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
