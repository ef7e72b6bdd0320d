/**
 * Redaction by derivation: a secret is replaced not only where it appears as it is, but in every
 * form a server, a library or an error message commonly re-encodes it into —
 *
 * - raw;
 * - JSON-escaped (a string inside JSON: `"`, `\`, control characters, non-ASCII as `\uXXXX`, `/` as
 *   `\/`), and JSON-escaped twice (JSON inside a JSON string);
 * - URL-encoded (`encodeURIComponent`, upper- and lower-case hex, `+` for spaces as in forms);
 * - hex of its UTF-8 bytes (upper- and lower-case);
 * - base64 and base64url of its UTF-8 bytes, with and without padding, at each of the three byte
 *   alignments — a secret inside a longer encoded value (`base64("user:" + secret)`, a Basic
 *   header) is encoded differently by its offset modulo 3, so each alignment's stable core (the
 *   characters that depend on the secret's bytes only) is redacted.
 *
 * Longest forms first, so a form that contains another is replaced whole. Secrets shorter than
 * MIN_SECRET_CHARS are not redacted (they would match everyday text). Pure: no I/O.
 */

/** What a redacted secret reads as. */
export const REDACTED = '[secret]';
/** Shorter values are not redacted (too likely to be ordinary text). */
export const MIN_SECRET_CHARS = 4;
/** Shortest base64 core that is redacted (a shorter one matches by chance). */
const MIN_CORE_CHARS = 6;

const utf8 = (s: string) => new TextEncoder().encode(s);

function base64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

const toUrlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

/** The base64 cores of `bytes` at byte offsets 0, 1 and 2 (padding dropped, partial groups cut). */
function base64Cores(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const padded = new Uint8Array(k + bytes.length);
    padded.set(bytes, k);
    let text = base64(padded).replace(/=+$/, '');
    // Characters holding bits of the k prefix bytes, and the last one when it holds bits of what follows.
    text = text.slice(k === 0 ? 0 : k + 1, (k + bytes.length) % 3 === 0 ? undefined : -1);
    if (text.length >= MIN_CORE_CHARS) out.push(text);
  }
  return out;
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** JSON string escaping without the quotes: as JSON.stringify writes it, non-ASCII as `\uxxxx` or `\uXXXX`, `/` as `\/`. */
function jsonForms(s: string): string[] {
  const plain = JSON.stringify(s).slice(1, -1);
  const escape = (upper: boolean) =>
    plain.replace(/[\u007f-\uffff]/g, (c) => {
      const h = c.charCodeAt(0).toString(16).padStart(4, '0');
      return `\\u${upper ? h.toUpperCase() : h}`;
    });
  const forms = [plain, escape(false), escape(true)];
  return [...forms, ...forms.map((f) => f.replace(/\//g, '\\/'))];
}

/** Every form of one secret (deduplicated, longest first). */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_SECRET_CHARS) return [];
  const bytes = utf8(secret);
  const forms = new Set<string>([secret]);
  for (const j of jsonForms(secret)) {
    forms.add(j);
    forms.add(JSON.stringify(j).slice(1, -1)); // JSON inside a JSON string
  }
  const uri = encodeURIComponent(secret);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(uri.replace(/%20/g, '+'));
  // encodeURIComponent keeps !'()*; strict encoders (RFC 3986 / forms) escape them too.
  forms.add(uri.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  const h = hex(bytes);
  forms.add(h);
  forms.add(h.toUpperCase());
  for (const core of base64Cores(bytes)) {
    forms.add(core);
    forms.add(toUrlSafe(core));
  }
  const whole = base64(bytes);
  forms.add(whole);
  forms.add(toUrlSafe(whole));
  return [...forms].filter((f) => f.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
}

/** A function that redacts `secrets` in all their forms (compiled once per set of secrets). */
export function secretRedactor(secrets: readonly string[], mark = REDACTED): (text: string) => string {
  const forms = [...new Set(secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (text) => text;
  const pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, mark);
}

/** `text` with every form of every secret replaced. */
export function redactSecrets(text: string, secrets: readonly string[], mark = REDACTED): string {
  return secretRedactor(secrets, mark)(text);
}

/** `value` with every string in it redacted (object keys too), for JSON-shaped data. */
export function redactDeep<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v, redact)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v, redact);
    return out as T;
  }
  return value;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
