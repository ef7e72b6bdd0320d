/**
 * An agent's tool allow-list: patterns over tool ids, applied to a registry's ids. Pure (safe for
 * workflows; no zod).
 *
 * A pattern is a tool id in which `*` stands for any run of characters, dots included: `react.*`
 * (every react tool), `web_*`, `mcp.github.*`, `*` (everything). A pattern starting with `!`
 * removes what it matches: `['*', '!web_search']`. A tool is allowed when some positive pattern
 * matches it and no negative one does; the result keeps the registry's order.
 */

/** Tool id characters (core/tools/registry.ts: lowercase segments joined by dots) plus `*`. */
const PATTERN_RE = /^!?[a-z0-9_.*]+$/;

/** Why `pattern` is not a valid tool pattern, or undefined when it is. */
export function toolPatternIssue(pattern: string): string | undefined {
  if (!PATTERN_RE.test(pattern))
    return `${JSON.stringify(pattern)} is not a tool pattern: use tool id characters (a-z 0-9 _ .), * as a wildcard and an optional leading !`;
  const body = pattern.replace(/^!/, '');
  if (body.startsWith('.') || body.endsWith('.') || body.includes('..'))
    return `${JSON.stringify(pattern)} is not a tool pattern: empty segment between dots`;
  if (body.includes('**'))
    return `${JSON.stringify(pattern)} is not a tool pattern: write * once (it already spans dots)`;
  return undefined;
}

/** True when `pattern` has a wildcard (an exact id otherwise). */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*');
}

function matcher(body: string): (id: string) => boolean {
  if (!isGlob(body)) return (id) => id === body;
  const re = new RegExp(`^${body.split('*').map(escapeRe).join('.*')}$`);
  return (id) => re.test(id);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Does `pattern` (without its `!`) match `id`? */
export function patternMatches(pattern: string, id: string): boolean {
  return matcher(pattern.replace(/^!/, ''))(id);
}

/**
 * The ids `patterns` allow, in the order of `ids`. Throws on an invalid pattern (validate with
 * `toolPatternIssue` first for a readable report).
 */
export function filterToolIds(ids: readonly string[], patterns: readonly string[]): string[] {
  for (const p of patterns) {
    const issue = toolPatternIssue(p);
    if (issue) throw new Error(issue);
  }
  const allow = patterns.filter((p) => !p.startsWith('!')).map(matcher);
  const deny = patterns.filter((p) => p.startsWith('!')).map((p) => matcher(p.slice(1)));
  return ids.filter((id) => allow.some((m) => m(id)) && !deny.some((m) => m(id)));
}

/** The patterns that match none of `ids` (typos, tools the worker does not have). */
export function unmatchedPatterns(ids: readonly string[], patterns: readonly string[]): string[] {
  return patterns.filter((p) => !ids.some((id) => patternMatches(p, id)));
}
