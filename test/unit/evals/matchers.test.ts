import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchValue, jsonEqual } from '../../../core/evals/value-matcher';
import { scoreTrajectory, globMatch, type ToolsExpect } from '../../../core/evals/trajectory';
import { scoreAnswer, answerJson } from '../../../core/evals/answer';
import { scoreFiles, scoreLimits } from '../../../core/evals/limits';
import { describeFailure, type ObservedCall, type TrialObservation } from '../../../core/evals/check';
import { judgeCheck, judgePrompt } from '../../../core/evals/judge';

const call = (tool: string, params: Record<string, unknown> = {}): ObservedCall => ({
  tool,
  params,
  turn: 1,
  round: 1,
});
const obs = (over: Partial<TrialObservation> = {}): TrialObservation => ({
  calls: [],
  answers: ['The refund window is 30 days [[S:1]].'],
  cited: [[1]],
  sources: [{ sid: 1, url: 'https://acme.test/refunds', title: 'Refund policy' }],
  notices: [],
  rounds: 2,
  tokens: 1200,
  costUsd: 0.004,
  wallMs: 1500,
  files: [{ path: 'turn_1/files/notes.md', mime: 'text/markdown', content: '# Notes\nbuy milk' }],
  ...over,
});
const only = (checks: ReturnType<typeof scoreAnswer>) => {
  assert.equal(checks.length, 1);
  return checks[0]!;
};

test('value matchers: equals, regex, JSON Schema — each passing and failing with the reason', () => {
  assert.equal(matchValue({ equals: { a: [1, 2] } }, { a: [1, 2] }), null);
  assert.match(matchValue({ equals: 'a' }, 'b')!, /"b" is not "a"/);
  assert.equal(matchValue({ regex: '^notes' }, 'notes.md'), null);
  assert.match(matchValue({ regex: '^notes' }, 'todo.md')!, /does not match \/\^notes\//);
  assert.equal(matchValue({ regex: 'x' }, undefined), 'missing');
  assert.equal(matchValue({ regex: '"k":1' }, { k: 1 }), null, 'non-strings match on their JSON');
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
  assert.equal(matchValue({ schema }, { n: 2 }), null);
  assert.match(matchValue({ schema }, { n: 0 })!, /is not valid: n:/);
  assert.ok(jsonEqual({ a: 1, b: [true] }, { b: [true], a: 1 }));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.throws(() => matchValue({ schema: { type: 'nonsense' } }, 1), /bad JSON Schema/);
});

test('globs match tool ids', () => {
  assert.ok(globMatch('react.*', 'react.write'));
  assert.ok(!globMatch('react.*', 'web_fetch'));
  assert.ok(globMatch('react.write', 'react.write'));
  assert.ok(!globMatch('react.write', 'react_write'));
});

const spec = (match: ToolsExpect['match'], calls: ToolsExpect['calls'], forbid?: string[]): ToolsExpect => ({
  match,
  calls,
  ...(forbid ? { forbid } : {}),
});
const W = { tool: 'react.write', params: { path: { regex: 'notes' } } };
const R = { tool: 'react.read' };

test('trajectory strict: exact order passes; wrong order, a param mismatch and extras fail naming the call', () => {
  const calls = [call('react.write', { path: 'notes.md' }), call('react.read', { path: 'notes.md' })];
  assert.ok(scoreTrajectory(spec('strict', [W, R]), calls)[0]!.pass);
  const reordered = scoreTrajectory(spec('strict', [R, W]), calls)[0]!;
  assert.equal(reordered.pass, false);
  assert.equal(reordered.name, 'tools.match(strict)');
  assert.match(describeFailure(reordered), /expected \[react.read, react.write\(path matches \/notes\/\)\]/);
  assert.match(reordered.observed, /call 1: tool react.write is not react.read/);
  const badParam = scoreTrajectory(spec('strict', [W, R]), [call('react.write', { path: 'todo.md' }), calls[1]!])[0]!;
  assert.match(badParam.observed, /params.path: "todo.md" does not match \/notes\//);
  const extra = scoreTrajectory(spec('strict', [W]), calls)[0]!;
  assert.equal(extra.pass, false);
  assert.match(extra.observed, /1 extra/);
});

test('trajectory unordered: any order passes; a missing or extra call fails', () => {
  const calls = [call('react.read'), call('react.write', { path: 'notes.md' })];
  assert.ok(scoreTrajectory(spec('unordered', [W, R]), calls)[0]!.pass);
  const missing = scoreTrajectory(spec('unordered', [W, R, R]), calls)[0]!;
  assert.equal(missing.pass, false);
  assert.match(missing.observed, /react.read: matched another expected call/);
  const extra = scoreTrajectory(spec('unordered', [W]), calls)[0]!;
  assert.match(extra.observed, /1 extra/);
});

test('trajectory subset: the expected calls among others pass; an absent tool fails naming it', () => {
  const calls = [call('web_search', { q: 'x' }), call('react.write', { path: 'notes.md' })];
  assert.ok(scoreTrajectory(spec('subset', [W]), calls)[0]!.pass);
  const fail = scoreTrajectory(spec('subset', [R]), calls)[0]!;
  assert.equal(fail.pass, false);
  assert.match(fail.observed, /no call of react.read in \[web_search/);
  // a bipartite assignment, not greedy: the wildcard must not steal the only notes call
  const two = [call('react.write', { path: 'notes.md' }), call('react.write', { path: 'other.md' })];
  assert.ok(scoreTrajectory(spec('subset', [{ tool: 'react.*' }, W]), two)[0]!.pass);
});

test('trajectory superset: only expected tools pass (some may be absent); another tool fails', () => {
  assert.ok(scoreTrajectory(spec('superset', [W, R]), [call('react.read')])[0]!.pass);
  assert.ok(scoreTrajectory(spec('superset', [W, R]), [])[0]!.pass);
  const fail = scoreTrajectory(spec('superset', [W]), [call('react.exec')])[0]!;
  assert.equal(fail.pass, false);
  assert.match(fail.observed, /unexpected react.exec/);
});

test('trajectory forbid: a forbidden tool fails, its absence passes', () => {
  const [, forbid] = scoreTrajectory(spec('subset', [], ['react.exec*']), [call('react.exec', { code: '1' })]);
  assert.equal(forbid!.pass, false);
  assert.equal(forbid!.name, 'tools.forbid(react.exec*)');
  assert.ok(scoreTrajectory(spec('subset', [], ['react.exec']), [call('react.read')])[1]!.pass);
});

test('answer: contains / not_contains / regex pass and fail naming the check', () => {
  const o = obs();
  assert.ok(only(scoreAnswer({ contains: ['30 days'] }, o)).pass);
  const miss = only(scoreAnswer({ contains: ['60 days'] }, o));
  assert.equal(miss.pass, false);
  assert.equal(
    describeFailure(miss),
    'answer.contains[0]: expected contains "60 days", observed "The refund window is 30 days [[S:1]]."',
  );
  assert.ok(only(scoreAnswer({ not_contains: ['sorry'] }, o)).pass);
  assert.equal(only(scoreAnswer({ not_contains: ['refund'] }, o)).pass, false);
  assert.ok(only(scoreAnswer({ regex: '\\d+ days' }, o)).pass);
  assert.equal(only(scoreAnswer({ regex: '^No' }, o)).name, 'answer.regex');
  assert.equal(only(scoreAnswer({ regex: '^No' }, o)).pass, false);
});

test('answer: JSON Schema on a fenced block or the whole text; no JSON fails', () => {
  const schema = { type: 'object', properties: { days: { type: 'number' } }, required: ['days'] };
  assert.ok(only(scoreAnswer({ schema }, obs({ answers: ['Here:\n```json\n{"days": 30}\n```'] }))).pass);
  assert.ok(only(scoreAnswer({ schema }, obs({ answers: ['{"days": 30}'] }))).pass);
  const wrong = only(scoreAnswer({ schema }, obs({ answers: ['{"days": "thirty"}'] })));
  assert.equal(wrong.pass, false);
  assert.match(wrong.observed, /days/);
  assert.equal(only(scoreAnswer({ schema }, obs())).observed, 'no JSON in the answer');
  assert.equal(answerJson('nothing'), undefined);
});

test('answer: citations present, a minimum, specific sources — passing and failing', () => {
  assert.ok(only(scoreAnswer({ citations: true }, obs())).pass);
  const none = only(scoreAnswer({ citations: true }, obs({ cited: [[]] })));
  assert.equal(none.pass, false);
  assert.equal(none.observed, 'no citations');
  assert.equal(only(scoreAnswer({ citations: { min: 2 } }, obs())).pass, false);
  assert.ok(only(scoreAnswer({ citations: { sources: ['acme.test/refunds'] } }, obs())).pass);
  assert.ok(only(scoreAnswer({ citations: { sources: ['Refund policy'] } }, obs())).pass);
  const other = only(scoreAnswer({ citations: { sources: ['shipping'] } }, obs()));
  assert.equal(other.name, 'answer.citations.sources[0]');
  assert.equal(other.pass, false);
});

test('answer: no protocol notices', () => {
  assert.ok(only(scoreAnswer({ no_protocol_notices: true }, obs())).pass);
  const bad = only(scoreAnswer({ no_protocol_notices: true }, obs({ notices: [{ code: 'invalid_json', turn: 1 }] })));
  assert.equal(bad.pass, false);
  assert.equal(bad.observed, 'invalid_json (turn 1)');
});

test('limits: rounds, tokens, cost and wall time — within and over', () => {
  const within = scoreLimits({ rounds: 2, tokens: 2000, cost_usd: 0.01, wall_seconds: 2 }, obs());
  assert.deepEqual(
    within.map((c) => [c.name, c.pass]),
    [
      ['limits.rounds', true],
      ['limits.tokens', true],
      ['limits.cost_usd', true],
      ['limits.wall_seconds', true],
    ],
  );
  const over = scoreLimits({ rounds: 1, tokens: 100, cost_usd: 0.001, wall_seconds: 1 }, obs());
  assert.ok(over.every((c) => !c.pass));
  assert.equal(describeFailure(over[0]!), 'limits.rounds: expected ≤ 1, observed 2');
  assert.equal(describeFailure(over[3]!), 'limits.wall_seconds: expected ≤ 1 s, observed 1.50 s');
});

test('files: name, type and content (contains, regex, equals) pass and fail', () => {
  const ok = scoreFiles([{ name: 'notes.md', type: 'text/', content: { contains: 'milk' } }], obs());
  assert.ok(ok.every((c) => c.pass));
  assert.deepEqual(
    ok.map((c) => c.name),
    ['files[notes.md]', 'files[notes.md].type', 'files[notes.md].content'],
  );
  const missing = scoreFiles([{ name: 'report.pdf' }], obs());
  assert.equal(
    describeFailure(missing[0]!),
    'files[report.pdf]: expected a file report.pdf, observed turn_1/files/notes.md',
  );
  const wrongType = scoreFiles([{ name: 'notes.md', type: 'application/pdf' }], obs());
  assert.equal(wrongType[1]!.pass, false);
  assert.equal(scoreFiles([{ name: 'notes.md', content: { regex: 'eggs' } }], obs())[1]!.pass, false);
  assert.equal(scoreFiles([{ name: 'notes.md', content: { contains: 'eggs' } }], obs())[1]!.pass, false);
  assert.ok(scoreFiles([{ name: 'notes.md', content: { equals: '# Notes\nbuy milk' } }], obs())[1]!.pass);
});

test('judge: a score at or above the threshold passes; below or unreadable fails', () => {
  assert.ok(judgeCheck('{"score": 0.8, "reason": "accurate"}', 0.7).pass);
  const low = judgeCheck('```json\n{"score": 0.5, "reason": "vague"}\n```', 0.7);
  assert.equal(low.pass, false);
  assert.equal(describeFailure(low), 'rubric: expected score ≥ 0.7, observed 0.5 (vague)');
  assert.match(judgeCheck('great answer!', 0.7).observed, /unreadable judge reply/);
  assert.match(judgePrompt('Be precise', ['Q1'], 'A'), /RUBRIC:\nBe precise[\s\S]*1\. Q1[\s\S]*ANSWER:\nA/);
});
