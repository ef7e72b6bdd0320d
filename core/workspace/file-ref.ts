/**
 * Which of a conversation's files a person means, named the way the model names it: a logical
 * path (`fi:<turn>.files/<rel>`, `fi:<turn>.outputs/<rel>`, `fi:<turn>.user.attachments/<name>`,
 * with or without `conv:` and a `conv_<id>.` owner naming this conversation), the storage key
 * (`turn_1/files/x`), or a plain relative name (`report.md`, `notes/a.md`) that only one file has.
 * The grammar is the timeline's (parsePath / physicalPath / logicalOfKey): no second one. Pure.
 */
import { editDistance } from '../text/edit-distance';
import { assertSafeRelPath, localizePath, parsePath, physicalPath } from '../timeline/paths';
import { logicalOfKey } from './refs';

const STORAGE_KEY = /^[^/:]+\/(files|outputs|attachments)\/./s;
const LOGICAL = /^(?:conv:)?[a-z]{2}:/;

export type FileRefResolution = { key: string } | { error: string; code: 'bad_input' | 'not_found'; near: string[] };

/** The part of a key under its turn and area (`turn_1/files/a/b.md` → `a/b.md`). */
function relOfKey(key: string): string {
  return key.replace(/^[^/]+\/[^/]+\//, '');
}

const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** Up to `limit` files whose logical path is nearest the input: same name first, then close spellings. */
export function nearFiles(input: string, keys: readonly string[], limit = 3): string[] {
  const wanted = baseName(input.replace(/^(?:conv:)?fi:[^/]*\//, '')).toLowerCase();
  return keys
    .map((key) => {
      const name = baseName(key).toLowerCase();
      const d = name === wanted ? 0 : editDistance(wanted, name);
      return {
        logical: logicalOfKey(key),
        d,
        ok: d <= Math.max(2, Math.floor(name.length / 3)) || name.includes(wanted),
      };
    })
    .filter((c) => c.ok)
    .sort((a, b) => a.d - b.d || a.logical.localeCompare(b.logical))
    .slice(0, limit)
    .map((c) => c.logical);
}

/**
 * The storage key a logical path or a key denotes, before checking that the conversation has it
 * (a plain name comes back as given: only the conversation's list can say which file it is).
 */
export function denotedFileKey(text: string, conversationId: string | undefined): { key: string } | { error: string } {
  if (LOGICAL.test(text)) {
    let p;
    try {
      p = parsePath(conversationId === undefined ? text : localizePath(text, conversationId));
    } catch (e) {
      const message = (e as Error).message;
      return { error: message.includes(text) ? message : `file path "${text}": ${message}` };
    }
    const key = p.kind === 'fi.git' || p.kind === 'fi.external.attachment' ? undefined : physicalPath(p);
    if (key === undefined)
      return {
        error: `file path "${text}" names no file of the conversation: expected fi:<turn>.files/<rel>, fi:<turn>.outputs/<rel> or fi:<turn>.user.attachments/<name>`,
      };
    return { key };
  }
  try {
    assertSafeRelPath(text, `file path "${text}"`);
  } catch (e) {
    return { error: (e as Error).message };
  }
  return { key: text };
}

/**
 * Resolves `input` among the conversation's file keys (`keys`, storage keys as store/file-store.ts
 * lists them). Not found, ambiguous or malformed: one line naming the input, with near matches.
 */
export function resolveFileRef(
  input: string,
  keys: readonly string[],
  opts: { conversationId?: string } = {},
): FileRefResolution {
  const text = input.trim();
  if (text === '') return { error: 'file path: empty', code: 'bad_input', near: [] };
  const denoted = denotedFileKey(text, opts.conversationId);
  if ('error' in denoted) return { error: denoted.error, code: 'bad_input', near: [] };
  const { key } = denoted;
  if (keys.includes(key)) return { key };
  if (!LOGICAL.test(text) && !STORAGE_KEY.test(text)) {
    const byRel = keys.filter((k) => relOfKey(k) === text);
    const matches = byRel.length > 0 ? byRel : keys.filter((k) => baseName(k) === text);
    if (matches.length === 1) return { key: matches[0]! };
    if (matches.length > 1)
      return {
        error: `file path "${text}" is ambiguous: ${matches.map(logicalOfKey).join(', ')} (name one of them)`,
        code: 'bad_input',
        near: matches.map(logicalOfKey),
      };
  }
  const near = nearFiles(text, keys);
  const hint =
    near.length > 0
      ? ` — did you mean ${near.join(', ')}?`
      : keys.length === 0
        ? ' (the conversation has no files)'
        : ` (it has ${keys.length} file${keys.length === 1 ? '' : 's'}: \`dreact files list\` shows them)`;
  return { error: `no file "${text}"${hint}`, code: 'not_found', near };
}
