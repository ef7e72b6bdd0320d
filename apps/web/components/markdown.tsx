/** Markdown rendered and sanitised (markdown.ts); `known`: the SIDs whose `[[S:n]]` markers link. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { renderMarkdown } from '../markdown';

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
  return (
    <div
      class={cls ? `md ${cls}` : 'md'}
      {...(tabIndex !== undefined ? { tabIndex } : {})}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
