/**
 * Conversation titles (the gate): the structured output the titling call must match, the
 * cleaning of whatever the model wrote, and the heuristic title taken from the prompt when the
 * call fails. Pure.
 */
import { z } from 'zod';

export const TITLE_MAX_CHARS = 80;

export const GateOutputSchema = z.object({
  title: z
    .string()
    .min(1)
    .max(200)
    .describe('A short, specific conversation title (3-8 words, no quotes, no trailing period).'),
});

/** One line, no wrapping quotes or trailing punctuation, at most TITLE_MAX_CHARS (cut at a word). */
export function cleanTitle(raw: string): string {
  let t = raw.replace(/\s+/g, ' ').trim();
  t = t
    .replace(/^["'“”‘’`«»]+|["'“”‘’`«»]+$/g, '')
    .replace(/[.:;,!\s]+$/u, '')
    .trim();
  if (t.length <= TITLE_MAX_CHARS) return t;
  const cut = t.slice(0, TITLE_MAX_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_MAX_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Title from the prompt alone: its first line / sentence, cleaned and capped. */
export function heuristicTitle(prompt: string): string {
  const firstLine =
    prompt
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(firstLine)?.[1] ?? firstLine;
  const title = cleanTitle(sentence);
  if (!title) return 'New conversation';
  return title.charAt(0).toUpperCase() + title.slice(1);
}
