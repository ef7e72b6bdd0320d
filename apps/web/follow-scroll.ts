/**
 * Follow the stream: a scrolling list stays at its end while it grows — whatever grows it (a new
 * event, a child's throttled Markdown render, a canvas) — unless the reader scrolled up; scrolling
 * back to the end follows again. A conversation opens at its latest turn.
 */
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import type { RefObject } from 'preact';

/** How close to the end (px) still counts as "at the end". */
const SLACK = 48;

export function useFollowScroll(list: RefObject<HTMLElement>, key: string) {
  const stick = useRef(true);
  const toEnd = () => {
    const el = list.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  };
  // A new conversation opens at its end.
  useEffect(() => {
    stick.current = true;
  }, [key]);
  // After each render of the owner …
  useLayoutEffect(toEnd);
  // … and after any change inside the list (children that render on their own).
  useEffect(() => {
    const el = list.current;
    if (!el) return;
    const observer = new MutationObserver(toEnd);
    observer.observe(el, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [list.current]);
  return {
    stick,
    onScroll: (e: Event) => {
      const el = e.currentTarget as HTMLElement;
      stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < SLACK;
    },
  };
}
