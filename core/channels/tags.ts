/**
 * Channel tag grammar: `<channel:NAME>` and `</channel:NAME>`, strictly — lowercase `channel`,
 * no whitespace inside the tag, NAME = 1-64 chars of `[A-Za-z0-9_-]`. Anything else (including a
 * whitespace-padded tag) is ordinary text. A match is `partial` only while the text could still
 * become a tag, which bounds hold-back to `</channel:` + 64 + `>` = 75 chars.
 */
import { MAX_CHANNEL_NAME } from './types';

export type TagMatch =
  { kind: 'open' | 'close'; name: string; length: number } | { kind: 'none' } | { kind: 'partial' };

const OPEN = '<channel:';
const CLOSE = '</channel:';

function isNameChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || // 0-9
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    code === 95 || // _
    code === 45 // -
  );
}

/** Decide whether a tag starts at `at` (where `text[at] === '<'`). With `final`, never `partial`. */
export function matchTag(text: string, at: number, final: boolean): TagMatch {
  const n = text.length;
  const partial: TagMatch = final ? { kind: 'none' } : { kind: 'partial' };
  if (at + 1 >= n) return partial;
  const close = text.charCodeAt(at + 1) === 47; // '/'
  const prefix = close ? CLOSE : OPEN;
  let i = at;
  for (let k = 0; k < prefix.length; k++, i++) {
    if (i >= n) return partial;
    if (text[i] !== prefix[k]) return { kind: 'none' };
  }
  const nameStart = i;
  while (i < n && isNameChar(text.charCodeAt(i))) {
    if (i - nameStart >= MAX_CHANNEL_NAME) return { kind: 'none' };
    i++;
  }
  if (i >= n) return partial;
  if (i === nameStart || text[i] !== '>') return { kind: 'none' };
  return { kind: close ? 'close' : 'open', name: text.slice(nameStart, i), length: i + 1 - at };
}
