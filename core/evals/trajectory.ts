/**
 * Trajectory scoring: the tool calls a trial made against the calls a case expects.
 *
 * - `strict`: exactly the expected calls, in the expected order.
 * - `unordered`: exactly the expected calls, in any order.
 * - `subset`: the expected calls are a subset of those made (each matched by a distinct call,
 *   any order; other calls allowed) — "it did at least this".
 * - `superset`: the expected calls are a superset of those made: every call made matches one of
 *   them (some may not be made) — "it did nothing else".
 *
 * (LangChain's agentevals names the last two from the other side: its `superset` means the
 * agent's trajectory contains the reference.) `forbid` lists tools (globs) never to be called.
 * Every failure names the check, what was expected and what was observed. Pure.
 */
import type { z } from 'zod';
import type { ExpectedCall, ToolsExpectSchema } from './suite';
import { check, show, type Check, type ObservedCall } from './check';
import { asMatcher, describeMatcher, matchValue } from './value-matcher';

export type ToolsExpect = z.output<typeof ToolsExpectSchema>;

/** `react.*` style globs: `*` is any run of characters. */
export function globMatch(pattern: string, id: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`);
  return re.test(id);
}
const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** Null when the call matches the expectation, else why not (`params.path: … does not match /x/`). */
export function callMismatch(expected: ExpectedCall, call: ObservedCall): string | null {
  if (!globMatch(expected.tool, call.tool)) return `tool ${call.tool} is not ${expected.tool}`;
  for (const [name, m] of Object.entries(expected.params ?? {})) {
    const why = matchValue(asMatcher(m), call.params[name]);
    if (why) return `params.${name}: ${why}`;
  }
  return null;
}

export function describeCall(e: ExpectedCall): string {
  const params = Object.entries(e.params ?? {}).map(([k, m]) => `${k} ${describeMatcher(asMatcher(m))}`);
  return params.length ? `${e.tool}(${params.join(', ')})` : e.tool;
}

const observedList = (calls: readonly ObservedCall[]) =>
  calls.length ? `[${calls.map((c) => `${c.tool}(${show(c.params, 80)})`).join(', ')}]` : 'no tool calls';
const expectedList = (calls: readonly ExpectedCall[]) => `[${calls.map(describeCall).join(', ')}]`;

/**
 * The largest assignment of expected calls to distinct observed calls (augmenting paths): for each
 * expected index, the observed index it took, or -1.
 */
export function assignCalls(expected: readonly ExpectedCall[], observed: readonly ObservedCall[]): number[] {
  const ok = expected.map((e) => observed.map((o) => callMismatch(e, o) === null));
  const owner = new Array<number>(observed.length).fill(-1);
  const take = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < observed.length; j++) {
      if (!ok[i]![j] || seen[j]) continue;
      seen[j] = true;
      if (owner[j] === -1 || take(owner[j]!, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  expected.forEach((_, i) => take(i, new Array<boolean>(observed.length).fill(false)));
  const result = new Array<number>(expected.length).fill(-1);
  owner.forEach((i, j) => {
    if (i >= 0) result[i] = j;
  });
  return result;
}

/** Why the first unmatched expected call found no partner: the nearest call of the same tool. */
function nearest(e: ExpectedCall, observed: readonly ObservedCall[]): string {
  const same = observed.filter((o) => globMatch(e.tool, o.tool));
  if (same.length === 0) return `no call of ${e.tool} in ${observedList(observed)}`;
  return same.map((o) => callMismatch(e, o) ?? 'matched another expected call').join('; ');
}

export function scoreTrajectory(spec: ToolsExpect, observed: readonly ObservedCall[]): Check[] {
  const name = `tools.match(${spec.match})`;
  const expected = spec.calls;
  const checks: Check[] = [];
  const exp = expectedList(expected);
  const obs = observedList(observed);
  if (spec.match === 'strict') {
    const wrong = expected.findIndex((e, i) => !observed[i] || callMismatch(e, observed[i]) !== null);
    if (wrong >= 0) {
      const o = observed[wrong];
      const why = o ? callMismatch(expected[wrong]!, o) : 'missing';
      checks.push(check(name, false, exp, `${obs} (call ${wrong + 1}: ${why})`));
    } else if (observed.length !== expected.length) {
      checks.push(check(name, false, exp, `${obs} (${observed.length - expected.length} extra)`));
    } else checks.push(check(name, true, exp, obs));
  } else if (spec.match === 'unordered' || spec.match === 'subset') {
    const assigned = assignCalls(expected, observed);
    const missing = assigned.findIndex((j) => j < 0);
    if (missing >= 0)
      checks.push(
        check(
          name,
          false,
          exp,
          `${obs} (${describeCall(expected[missing]!)}: ${nearest(expected[missing]!, observed)})`,
        ),
      );
    else if (spec.match === 'unordered' && observed.length !== expected.length)
      checks.push(check(name, false, exp, `${obs} (${observed.length - expected.length} extra)`));
    else checks.push(check(name, true, exp, obs));
  } else {
    const extra = observed.find((o) => !expected.some((e) => callMismatch(e, o) === null));
    checks.push(
      extra
        ? check(name, false, `only calls among ${exp}`, `${obs} (unexpected ${extra.tool}(${show(extra.params, 80)}))`)
        : check(name, true, `only calls among ${exp}`, obs),
    );
  }
  for (const pattern of spec.forbid ?? []) {
    const hit = observed.filter((o) => globMatch(pattern, o.tool));
    checks.push(
      check(
        `tools.forbid(${pattern})`,
        hit.length === 0,
        `no call of ${pattern}`,
        hit.length ? `${hit.length} call(s): ${observedList(hit)}` : 'none',
      ),
    );
  }
  return checks;
}
