/**
 * JSON helpers for json channels: fence stripping, tolerant parsing and zod validation.
 *
 * Tolerance is deliberately narrow: raw control characters inside strings (a common model slip,
 * e.g. literal newlines in a long answer) are escaped, and text after the first complete
 * top-level value is ignored. Anything else is a parse error with a readable message.
 */
import type { z } from 'zod';

/** Strip a surrounding ``` fence (with optional info word such as `json`) and trim. */
export function stripFence(text: string): string {
  let t = text.trim();
  const open = /^(`{3,})[A-Za-z0-9_+-]*/.exec(t);
  if (!open) return t;
  t = t.slice(open[0].length);
  const close = /`{3,}\s*$/.exec(t);
  if (close && close[0].trim().length >= open[1]!.length) t = t.slice(0, close.index);
  return t.trim();
}

/**
 * End index (exclusive) of the JSON value starting at `start` (`{`, `[`, `"` or a primitive),
 * or -1 when it is not complete in `text`. Strings are tracked, so brackets inside them do not count.
 */
export function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === undefined) return -1;
  if (first !== '{' && first !== '[' && first !== '"') {
    const m = /^[^\s,}\]]+/.exec(text.slice(start));
    const end = start + (m ? m[0].length : 0);
    return end < text.length ? end : -1;
  }
  let depth = 0;
  let inString = false;
  let escape = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escape) escape = false;
      else if (c === '\\') escape = true;
      else if (c === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

const CONTROL_RE = /[\u0000-\u001f]/;

/** Escape raw control characters (U+0000-U+001F) that appear inside JSON strings. */
export function escapeControlsInStrings(text: string): string {
  if (!CONTROL_RE.test(text)) return text;
  let out = '';
  let inString = false;
  let escape = false;
  for (const c of text) {
    if (inString) {
      if (escape) escape = false;
      else if (c === '\\') escape = true;
      else if (c === '"') inString = false;
      else if (c < ' ') {
        out +=
          c === '\n'
            ? '\\n'
            : c === '\r'
              ? '\\r'
              : c === '\t'
                ? '\\t'
                : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
        continue;
      }
    } else if (c === '"') inString = true;
    out += c;
  }
  return out;
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

/** Parse one JSON value (fence already stripped), tolerating raw control chars in strings and trailing text. */
export function parseJsonLenient(text: string): JsonParse {
  const t = text.trim();
  if (t === '') return { ok: false, error: 'empty JSON body' };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch (first) {
    const repaired = escapeControlsInStrings(t);
    const end = valueEnd(repaired, 0);
    const candidate = end > 0 ? repaired.slice(0, end) : repaired;
    try {
      return { ok: true, value: JSON.parse(candidate) };
    } catch {
      return { ok: false, error: `invalid JSON: ${(first as Error).message}` };
    }
  }
}

/** Parse and (when a schema is given) validate; the error names the failing paths. */
export function parseJsonInstance(text: string, schema?: z.ZodType): JsonParse {
  const parsed = parseJsonLenient(text);
  if (!parsed.ok || !schema) return parsed;
  const v = schema.safeParse(parsed.value);
  if (v.success) return { ok: true, value: v.data };
  const issues = v.error.issues
    .slice(0, 5)
    .map((iss) => `${iss.path.length ? iss.path.join('.') : '(root)'}: ${iss.message}`)
    .join('; ');
  return { ok: false, error: `schema validation failed: ${issues}` };
}
