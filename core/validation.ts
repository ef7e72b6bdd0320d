/**
 * One readable message for a failed zod parse, wherever input is checked (update validators,
 * gateway bodies and queries, CLI options, stored payloads): each issue names its field path and
 * the rule it broke — `prompt: expected string, received undefined; options.model.foo: unrecognized
 * key`. zod's own messages say the rule but not the field (`Invalid input: expected string,
 * received undefined`), which is all a client that did not write this code gets to see.
 *
 * Pure and zod-free at run time (it reads issue objects), so workflow code can import it without
 * building schemas.
 */

/** The part of a zod issue the message needs (zod 4 `$ZodIssue`). */
export interface IssueLike {
  readonly code?: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** unrecognized_keys: the keys not allowed. */
  readonly keys?: readonly string[];
  /** invalid_union: the issues of each alternative. */
  readonly errors?: readonly (readonly IssueLike[])[];
}

export interface FormatOptions {
  /** What was checked: the message becomes `invalid <source>: …` (e.g. `startTurn update`). */
  source?: string;
  /** Path of the checked value inside a larger input (`['options']` names `options.model`). */
  path?: readonly PropertyKey[];
  /** Name of the value itself, for an issue without a path (`request: expected object, …`). */
  root?: string;
}

/** `options.model.provider`, `attachments.0.name`; empty for the value itself. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'symbol' ? (p.description ?? 'symbol') : String(p))).join('.');
}

/** One line per field: `<path>: <rule>` (zod's generic `Invalid input: ` lead dropped). */
export function issueLines(issue: IssueLike, opts: Pick<FormatOptions, 'path' | 'root'> = {}): string[] {
  const path = [...(opts.path ?? []), ...issue.path];
  const line = (at: readonly PropertyKey[], rule: string) => {
    const name = issuePath(at) || opts.root;
    return name ? `${name}: ${rule}` : rule;
  };
  if (issue.code === 'unrecognized_keys' && issue.keys?.length)
    return issue.keys.map((k) => line([...path, k], 'unrecognized key'));
  if (issue.code === 'invalid_union' && issue.errors?.length) {
    // The alternative that came closest (fewest issues) says what to fix.
    const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
    if (closest.length > 0) return closest.flatMap((i) => issueLines(i, { ...opts, path }));
  }
  return [line(path, rule(issue.message))];
}

function rule(message: string): string {
  const m = /^Invalid input: (.+)$/s.exec(message);
  return m ? m[1]! : message;
}

/** All issues of a failed parse as one message (see the module comment). */
export function formatZodError(
  err: { readonly issues: readonly IssueLike[] } | readonly IssueLike[],
  opts: FormatOptions = {},
): string {
  const issues: readonly IssueLike[] = 'issues' in err ? err.issues : err;
  const lines = issues.flatMap((i) => issueLines(i, opts));
  const text = lines.length > 0 ? lines.join('; ') : 'invalid input';
  return opts.source ? `invalid ${opts.source}: ${text}` : text;
}
