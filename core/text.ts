/**
 * Text that can reach Postgres or a model: what is wrong with it, and how to make it safe.
 *
 * Postgres refuses two things every JavaScript string can hold: a NUL (U+0000: 22021 in a `text`
 * column, 22P05 inside `jsonb`) and a lone UTF-16 surrogate (U+D800–U+DFFF without its pair:
 * 22P05 inside `jsonb`; silently U+FFFD in `text`). A turn that carries either fails on every
 * retry of every step that writes it, so it must never get that far. Two policies, by who chose
 * the text:
 *
 * - **Reject** (`textProblem`, used by `TextInputSchema` in core/turn/contracts.ts): text a user
 *   or client sends — prompt, followup, steer, conversation title, feedback text, attachment
 *   names in a turn's refs (an upload's own name is made safe by core/attachments/policy.ts).
 *   Refused at the boundary (gateway, TypeScript client and CLI, the startTurn update's validator)
 *   with a 400 naming the field: a NUL, any other C0 control character except tab, line feed and
 *   carriage return, a lone surrogate; and, for prompt-like fields, text made only of invisible
 *   characters (whitespace, zero-width and format characters, fillers). Empty optional feedback
 *   text is no comment, not an error.
 * - **Normalise** (`normaliseText`, `normaliseDeep`, `jsonForPostgres`): text the turn did not
 *   choose — tool results, extracted attachment text, model output, MCP results, and signals
 *   (which cannot be refused once sent). A NUL and each lone surrogate become U+FFFD; everything
 *   else (other controls included: Postgres and the models accept them) is kept. The store's
 *   write paths serialise JSON through `jsonForPostgres`, the last line of defence: no `jsonb` or
 *   `text` value carries a NUL or a lone surrogate, whatever an earlier layer missed. A data
 *   exception that still reaches Postgres fails its activity at once (activities/bad-data.ts).
 *
 * Pure and zod-free: workflows import it (signal handlers normalise what they accept).
 */

/** U+FFFD REPLACEMENT CHARACTER: what a NUL or a lone surrogate becomes. */
export const REPLACEMENT_CHAR = '\uFFFD';

// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
/** C0 controls other than tab, line feed and carriage return. */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
/** What Postgres cannot store: a NUL or a lone surrogate (the fast check of `normaliseText`). */
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);
/**
 * Characters that show nothing: whitespace and separators, controls, format characters
 * (zero-width space/joiners, BOM, bidi marks, soft hyphen…), Hangul and braille fillers,
 * variation selectors and the combining grapheme joiner.
 */
const INVISIBLE_ONLY =
  /^[\s\p{Z}\p{Cc}\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180E\u2800\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]*$/u;

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

export interface TextRules {
  /** Refuse text made only of invisible characters (prompt-like fields). Default true. */
  visible?: boolean;
}

/**
 * What makes `s` unacceptable as user input, as a readable phrase ("contains a NUL character
 * (U+0000) at position 1"), or undefined when it is fine. Prefix it with the field's name.
 */
export function textProblem(s: string, rules: TextRules = {}): string | undefined {
  const nul = s.indexOf('\u0000');
  if (nul >= 0) return `contains a NUL character (U+0000) at position ${nul}`;
  const control = CONTROL.exec(s);
  if (control)
    return `contains the control character ${codePoint(control[0])} at position ${control.index} (only tab, line feed and carriage return are allowed)`;
  const lone = LONE_SURROGATE.exec(s);
  if (lone)
    return `contains a lone UTF-16 surrogate (${codePoint(lone[0])}) at position ${lone.index}: the text is not well-formed Unicode`;
  if ((rules.visible ?? true) && INVISIBLE_ONLY.test(s))
    return s.length === 0 ? 'is empty' : 'is empty (only invisible or whitespace characters)';
  return undefined;
}

/** Whether Postgres can store `s` (no NUL, no lone surrogate). */
export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/** `s` with each NUL and lone surrogate replaced by U+FFFD (the same string when there is none). */
export function normaliseText(s: string): string {
  if (!UNSTORABLE.test(s)) return s;
  return s.replace(/\u0000/g, REPLACEMENT_CHAR).replace(LONE_SURROGATES, REPLACEMENT_CHAR);
}

/**
 * A JSON-like value with every string (object keys included) normalised. Returns the same value
 * when nothing needed it, so the common case allocates nothing.
 */
export function normaliseDeep<T>(value: T): T {
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (typeof v === 'string') return normaliseText(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const w = walk(v[i]);
      if (w !== v[i]) (out ??= v.slice())[i] = w;
    }
    return out ?? v;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return v; // Date, Buffer…
  let out: Record<string, unknown> | undefined;
  for (const [k, val] of Object.entries(v)) {
    const nk = normaliseText(k);
    const w = walk(val);
    if (nk !== k || w !== val) {
      out ??= { ...(v as Record<string, unknown>) };
      if (nk !== k) delete out[k];
      out[nk] = w;
    }
  }
  return out ?? v;
}

/**
 * `JSON.stringify(value)` for a `jsonb` (or `text`) parameter: strings normalised, so Postgres
 * never sees the `\u0000` or lone-surrogate escapes it refuses.
 */
export function jsonForPostgres(value: unknown): string {
  const json = JSON.stringify(value);
  // JSON.stringify writes a NUL as the escape \u0000 and a lone surrogate as \udXXX; a string
  // holding the six characters `\u0000` is written `\\u0000`. The cheap test covers both cases.
  if (json === undefined || !/\\u(0000|d[89a-f])/i.test(json)) return json;
  return JSON.stringify(normaliseDeep(value));
}

/**
 * A user event that arrived as a signal, made safe to keep: its text normalised (a signal cannot
 * be refused, and a steer with a bad character must still stop the turn). Undefined when the
 * payload is not an event at all (no string `text`): the workflow drops it and logs, rather than
 * fail its task on it. The same object when nothing changed.
 */
export function normaliseEventText<E extends { text: string }>(event: E): E | undefined {
  if (event === null || typeof event !== 'object' || typeof event.text !== 'string') return undefined;
  const text = normaliseText(event.text);
  return text === event.text ? event : { ...event, text };
}
