/**
 * Answer scoring: the trial's final answer (its last turn's) against `expect.answer` — substrings,
 * a regular expression, a JSON Schema (on the JSON the answer holds: a fenced block or the whole
 * text), citations (any, a minimum count, specific sources by URL or title substring) and no
 * protocol notices over the whole trial. One check per expectation. Pure.
 */
import type { z } from 'zod';
import type { AnswerExpectSchema } from './suite';
import { check, show, type Check, type TrialObservation } from './check';
import { matchValue } from './value-matcher';

export type AnswerExpect = z.output<typeof AnswerExpectSchema>;

/** The JSON an answer holds: its first fenced block, else the whole text; undefined when neither parses. */
export function answerJson(answer: string): unknown {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(answer);
  for (const text of [fenced?.[1], answer]) {
    if (text === undefined) continue;
    try {
      return JSON.parse(text.trim());
    } catch {
      // not JSON: try the next form
    }
  }
  return undefined;
}

export function scoreAnswer(spec: AnswerExpect, obs: TrialObservation): Check[] {
  const answer = obs.answers.at(-1) ?? '';
  const observed = show(answer);
  const checks: Check[] = [];
  (spec.contains ?? []).forEach((s, i) =>
    checks.push(check(`answer.contains[${i}]`, answer.includes(s), `contains ${show(s)}`, observed)),
  );
  (spec.not_contains ?? []).forEach((s, i) =>
    checks.push(check(`answer.not_contains[${i}]`, !answer.includes(s), `no ${show(s)}`, observed)),
  );
  if (spec.regex !== undefined)
    checks.push(check('answer.regex', new RegExp(spec.regex).test(answer), `matches /${spec.regex}/`, observed));
  if (spec.schema !== undefined) {
    const json = answerJson(answer);
    const why = json === undefined ? 'no JSON in the answer' : matchValue({ schema: spec.schema }, json);
    checks.push(check('answer.schema', why === null, `JSON valid under ${show(spec.schema)}`, why ?? show(json)));
  }
  if (spec.citations !== undefined && spec.citations !== false) checks.push(...scoreCitations(spec.citations, obs));
  if (spec.no_protocol_notices) {
    const codes = obs.notices.map((n) => `${n.code} (turn ${n.turn})`);
    checks.push(
      check('answer.no_protocol_notices', codes.length === 0, 'no notices', codes.length ? codes.join(', ') : 'none'),
    );
  }
  return checks;
}

function scoreCitations(spec: true | { min?: number; sources?: string[] }, obs: TrialObservation): Check[] {
  const cited = [...new Set(obs.cited.at(-1) ?? [])];
  const sources = cited.map((sid) => obs.sources.find((s) => s.sid === sid) ?? { sid });
  const observed = cited.length
    ? sources.map((s) => `S${s.sid}${'url' in s && s.url ? ` ${s.url}` : ''}`).join(', ')
    : 'no citations';
  const min = spec === true ? 1 : (spec.min ?? (spec.sources?.length ? 0 : 1));
  const checks: Check[] = [];
  if (min > 0) checks.push(check('answer.citations.min', cited.length >= min, `≥ ${min} cited source(s)`, observed));
  for (const [i, want] of (spec === true ? [] : (spec.sources ?? [])).entries()) {
    const hit = sources.some((s) => ('url' in s && s.url?.includes(want)) || ('title' in s && s.title?.includes(want)));
    checks.push(check(`answer.citations.sources[${i}]`, hit, `cites ${show(want)}`, observed));
  }
  return checks;
}
