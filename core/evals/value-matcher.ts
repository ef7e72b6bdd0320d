/**
 * One value against a matcher: `equals` (deep, JSON equality), `regex` (on the value's string
 * form: a string as it is, anything else as JSON) or `schema` (JSON Schema, through zod's
 * `fromJSONSchema`). Returns null on a match, else why not. Pure.
 */
import { z } from 'zod';
import type { ValueMatcher } from './suite';
import { show } from './check';

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  const ka = Object.keys(oa).filter((k) => oa[k] !== undefined);
  const kb = Object.keys(ob).filter((k) => ob[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual(oa[k], ob[k]));
}

export const stringForm = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)));

const schemas = new Map<string, z.ZodType>();
function schemaOf(schema: Record<string, unknown>): z.ZodType {
  const key = JSON.stringify(schema);
  let s = schemas.get(key);
  if (!s) {
    try {
      s = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      throw new Error(`bad JSON Schema ${show(schema)}: ${(err as Error).message}`);
    }
    if (schemas.size < 512) schemas.set(key, s);
  }
  return s;
}

/** What the matcher expects, in words (`equals "a"`, `matches /x/`, `valid under {…}`). */
export function describeMatcher(m: ValueMatcher): string {
  if ('equals' in m) return `equals ${show(m.equals)}`;
  if ('regex' in m) return `matches /${m.regex}/`;
  return `valid under schema ${show(m.schema)}`;
}

/** Null when `value` matches, else the reason it does not. */
export function matchValue(m: ValueMatcher, value: unknown): string | null {
  if ('equals' in m) return jsonEqual(m.equals, value) ? null : `${show(value)} is not ${show(m.equals)}`;
  if ('regex' in m) {
    if (value === undefined) return 'missing';
    return new RegExp(m.regex).test(stringForm(value)) ? null : `${show(value)} does not match /${m.regex}/`;
  }
  const parsed = schemaOf(m.schema).safeParse(value);
  if (parsed.success) return null;
  const first = parsed.error.issues[0];
  return `${show(value)} is not valid: ${first ? `${first.path.join('.') || 'value'}: ${first.message}` : 'invalid'}`;
}

/** A bare value in a params map means `equals`. */
export function asMatcher(m: ValueMatcher | string | number | boolean | null): ValueMatcher {
  return m !== null && typeof m === 'object' ? m : { equals: m };
}
