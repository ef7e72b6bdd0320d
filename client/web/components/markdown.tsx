/** Markdown rendered and sanitised (markdown.ts); `known`: the SIDs whose `[[S:n]]` markers link. */
import { useMemo } from 'preact/hooks';
import { renderMarkdown } from '../markdown';

export function Markdown({
  text,
  known,
  class: cls,
  tabIndex,
}: {
  text: string;
  known?: ReadonlySet<number>;
  class?: string;
  /** 0 for a scrolling canvas (keyboard users can scroll it). */
  tabIndex?: number;
}) {
  const html = useMemo(() => renderMarkdown(text, known), [text, known]);
  return (
    <div
      class={cls ? `md ${cls}` : 'md'}
      {...(tabIndex !== undefined ? { tabIndex } : {})}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
