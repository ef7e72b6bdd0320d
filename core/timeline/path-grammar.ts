/**
 * The grammar's pieces shared by the path parser and formatter (paths.ts): the token patterns,
 * the `LogicalPath` type, safe relative paths and SID selectors. Pure.
 */

/** Turn ids: `turn_<n>` or any `[A-Za-z0-9_-]+` (no dots). */
export const TURN_ID_RE = /^[A-Za-z0-9_-]+$/;
/** Call ids, message ids: dot-free tokens (`tc_<12 hex>`, `3-0`, uuids...). */
export const TOKEN_RE = /^[A-Za-z0-9_-]+$/;
export const MESSAGE_ID_RE = /^[A-Za-z0-9_:-]+$/;
export const PLAN_ID_RE = /^[A-Za-z0-9_:-]+$/;
export const EVENT_KIND_RE = /^[a-z][a-z0-9_]*$/;
export const SYSTEM_NAME_RE = /^[A-Za-z0-9_-]+$/;
/** Conversation ids inside an owner segment `conv_<id>.` (no dots: the dot ends the segment). */
export const OWNER_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_:-]*$/;
export const OWNER_PREFIX = 'conv_';

export type PathNamespace = 'fi' | 'ar' | 'tc' | 'so' | 'su' | 'ws' | 'sk' | 'ks';

export type LogicalPath =
  | { ns: 'fi'; kind: 'fi.files' | 'fi.outputs'; turnId: string; rel: string }
  | { ns: 'fi'; kind: 'fi.git'; turnId: string; area: 'projects' | 'snapshots'; rel: string }
  | { ns: 'fi'; kind: 'fi.user.attachment'; turnId: string; name: string }
  | { ns: 'fi'; kind: 'fi.external.attachment'; turnId: string; eventKind: string; messageId: string; name: string }
  | { ns: 'fi'; kind: 'fi.code'; turnId: string; callId: string }
  | { ns: 'tc'; kind: 'tc.call' | 'tc.result'; turnId: string; callId: string }
  | { ns: 'ar'; kind: 'ar.user.prompt'; turnId: string }
  | { ns: 'ar'; kind: 'ar.external'; turnId: string; eventKind: string; messageId: string }
  | { ns: 'ar'; kind: 'ar.completion'; turnId: string; n?: number }
  | { ns: 'ar'; kind: 'ar.plan.latest'; planId: string }
  | { ns: 'ar'; kind: 'ar.turn.index'; turnId: string }
  | { ns: 'ar'; kind: 'ar.notes' | 'ar.round.start'; turnId: string; callId: string }
  | { ns: 'ar'; kind: 'ar.plan'; turnId: string; planId: string; carry?: boolean }
  | { ns: 'ar'; kind: 'ar.plan.ack'; turnId: string; iter: number }
  | { ns: 'ar'; kind: 'ar.decision.raw'; turnId: string; iter: number; interrupted?: boolean }
  | { ns: 'ar'; kind: 'ar.system.message'; turnId: string; name: string }
  /** `conversationId`: the owner segment of `so:conv_<id>.sources_pool[…]` when it names another conversation. */
  | { ns: 'so'; kind: 'so.pool'; sids: number[] | null; conversationId?: string }
  | { ns: 'su'; kind: 'su.range.summary'; turnId: string }
  | { ns: 'ws'; kind: 'ws.working.summary'; turnId: string; attempt?: number }
  | { ns: 'sk'; kind: 'sk.skill'; name: string }
  | { ns: 'ks'; kind: 'ks.knowledge'; rel: string };

export type PathKind = LogicalPath['kind'];

export const MAX_PATH_CHARS = 2048;

/** Throws unless `rel` is a safe relative path: no traversal, absolute forms, NUL, backslash. */
export function assertSafeRelPath(rel: string, what = 'path'): string {
  if (rel.length === 0) throw new Error(`${what}: empty relative path`);
  if (rel.includes('\0')) throw new Error(`${what}: NUL byte is not allowed`);
  if (rel.includes('\\')) throw new Error(`${what}: backslashes are not allowed (use "/")`);
  if (/[\u0001-\u001f\u007f]/.test(rel)) throw new Error(`${what}: control characters are not allowed`);
  if (rel.startsWith('/') || rel.startsWith('~')) throw new Error(`${what}: absolute paths are not allowed: "${rel}"`);
  if (/^[A-Za-z]:/.test(rel)) throw new Error(`${what}: drive-letter paths are not allowed: "${rel}"`);
  for (const seg of rel.split('/')) {
    if (seg === '') throw new Error(`${what}: empty path segment in "${rel}"`);
    if (seg.trim() !== seg) throw new Error(`${what}: path segment "${seg}" starts or ends with whitespace`);
    if (/^(\.|%2e){1,2}$/i.test(seg)) throw new Error(`${what}: traversal segment "${seg}" is not allowed in "${rel}"`);
  }
  return rel;
}

export function need(re: RegExp, value: string | undefined, what: string, raw: string): string {
  if (value === undefined || !re.test(value)) {
    throw new Error(`invalid ${what} ${JSON.stringify(value ?? '')} in path "${raw}"`);
  }
  return value;
}

export function posInt(value: string, what: string, raw: string, min = 0): number {
  if (!/^[0-9]+$/.test(value) || Number(value) < min) throw new Error(`invalid ${what} "${value}" in path "${raw}"`);
  return Number(value);
}

/** Parses `1,3-5,9:7` into SIDs in the given order; reversed ranges are swapped. */
export function parseSidSelector(selector: string, raw = selector): number[] {
  const out: number[] = [];
  const tokens = selector.split(',').map((t) => t.trim());
  if (tokens.length === 0 || tokens.every((t) => t === '')) throw new Error(`empty sources selector in "${raw}"`);
  for (const token of tokens) {
    if (token === '') throw new Error(`empty item in sources selector "${raw}"`);
    const m = /^(\d+)\s*(?:[-:]\s*(\d+))?$/.exec(token);
    if (!m) throw new Error(`invalid sources selector item "${token}" in "${raw}" (use n, a-b or a:b)`);
    let a = Number(m[1]);
    let b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b < 1) throw new Error(`SIDs start at 1: "${token}" in "${raw}"`);
    if (a > b) [a, b] = [b, a];
    if (b - a > 10_000) throw new Error(`sources range too large: "${token}" in "${raw}"`);
    for (let s = a; s <= b; s++) out.push(s);
  }
  return [...new Set(out)];
}

/** `[5, 3, 6]` -> `"3, 5-6"` (sorted, de-duplicated, consecutive runs joined). */
export function formatSidSelector(sids: number[]): string {
  if (sids.length === 0) throw new Error('a sources selector needs at least one SID');
  const sorted = [...new Set(sids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(', ');
}
