/**
 * Limits and files: rounds, tokens, cost and wall time at most the case's bounds; each expected
 * file present (by name or path suffix) with its type and content. Pure.
 */
import type { z } from 'zod';
import type { FileExpectSchema, LimitsExpectSchema } from './suite';
import { check, show, type Check, type TrialObservation } from './check';
import { matchValue } from './value-matcher';

export type LimitsExpect = z.output<typeof LimitsExpectSchema>;
export type FileExpect = z.output<typeof FileExpectSchema>;

export function scoreLimits(spec: LimitsExpect, obs: TrialObservation): Check[] {
  const out: Check[] = [];
  const bound = (name: string, max: number | undefined, value: number, unit = '') => {
    if (max !== undefined) out.push(check(`limits.${name}`, value <= max, `≤ ${max}${unit}`, `${value}${unit}`));
  };
  bound('rounds', spec.rounds, obs.rounds);
  bound('tokens', spec.tokens, obs.tokens);
  if (spec.cost_usd !== undefined)
    out.push(
      check('limits.cost_usd', obs.costUsd <= spec.cost_usd, `≤ $${spec.cost_usd}`, `$${obs.costUsd.toFixed(6)}`),
    );
  if (spec.wall_seconds !== undefined)
    out.push(
      check(
        'limits.wall_seconds',
        obs.wallMs <= spec.wall_seconds * 1000,
        `≤ ${spec.wall_seconds} s`,
        `${(obs.wallMs / 1000).toFixed(2)} s`,
      ),
    );
  return out;
}

const fileMatches = (name: string, path: string) => path === name || path.endsWith(`/${name}`);

export function scoreFiles(specs: readonly FileExpect[], obs: TrialObservation): Check[] {
  return specs.flatMap((spec) => {
    const name = `files[${spec.name}]`;
    const file = obs.files.find((f) => fileMatches(spec.name, f.path));
    const listing = obs.files.length ? obs.files.map((f) => f.path).join(', ') : 'no files';
    if (!file) return [check(name, false, `a file ${spec.name}`, listing)];
    const out: Check[] = [check(name, true, `a file ${spec.name}`, file.path)];
    if (spec.type !== undefined)
      out.push(
        check(`${name}.type`, (file.mime ?? '').startsWith(spec.type), `type ${spec.type}`, file.mime ?? 'unknown'),
      );
    if (spec.content !== undefined) {
      const content = file.content ?? '';
      const why =
        'contains' in spec.content
          ? content.includes(spec.content.contains)
            ? null
            : `${show(content)} does not contain ${show(spec.content.contains)}`
          : matchValue(spec.content, content);
      const expected = 'contains' in spec.content ? `contains ${show(spec.content.contains)}` : show(spec.content);
      out.push(check(`${name}.content`, why === null, expected, why ?? show(content)));
    }
    return out;
  });
}
