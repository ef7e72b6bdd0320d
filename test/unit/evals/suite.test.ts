import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSuite, trialsOf, turnOf } from '../../../core/evals/suite';

test('a suite parses with defaults', () => {
  const s = parseSuite(
    `cases:
  - id: writes-notes
    agent: default
    turns: ["Write my notes to notes.md", { prompt: "and read them", steer: { at_round: 2, text: "stop", during_tool: react.read } }]
    expect:
      tools: { match: subset, calls: [{ tool: react.write, params: { path: { regex: notes } } }] }
      answer: { contains: ["notes"] }
`,
    'evals/x.yaml',
  );
  assert.equal(s.trials, 1);
  assert.equal(s.cases[0]!.expect.tools?.match, 'subset');
  assert.equal(turnOf(s.cases[0]!.turns[1]!).steer?.at_round, 2);
  assert.equal(turnOf(s.cases[0]!.turns[1]!).steer?.during_tool, 'react.read');
  assert.equal(trialsOf(s, s.cases[0]!, 3), 3);
});

test('errors name the file, the case and the field', () => {
  assert.throws(
    () =>
      parseSuite(
        `cases:
  - id: ok-case
    turns: [hi]
  - id: refund-policy
    turns: [hi]
    expect: { tools: { match: sometimes }, answer: { contain: [x] } }
`,
        'evals/bad.yaml',
      ),
    (err: Error) => {
      assert.match(err.message, /^evals\/bad\.yaml: case "refund-policy": /);
      assert.match(err.message, /expect\.tools\.match: /);
      assert.match(err.message, /expect\.answer\.contain: unrecognized key/);
      return true;
    },
  );
  assert.throws(() => parseSuite(`cases:\n  - turns: [hi]\n`, 'f.yaml'), /f\.yaml: case 1: id: /);
  assert.throws(() => parseSuite(`cases: [`, 'f.yaml'), /^SuiteError: f\.yaml: |f\.yaml: /);
  assert.throws(
    () => parseSuite(`cases:\n  - {id: a, turns: [x]}\n  - {id: a, turns: [y]}\n`, 'f.yaml'),
    /case "a": id is used twice/,
  );
});

test('fixtures: pages by path with defaults; a bad path or field is named', () => {
  const s = parseSuite(
    `fixtures:\n  /refunds: { body: '<p>30 days</p>' }\ncases:\n  - id: a\n    turns: [hi]\n`,
    'f.yaml',
  );
  assert.deepEqual(s.fixtures?.['/refunds'], {
    body: '<p>30 days</p>',
    content_type: 'text/html; charset=utf-8',
    delay_ms: 0,
  });
  assert.throws(
    () => parseSuite(`fixtures:\n  refunds: { body: x }\ncases:\n  - id: a\n    turns: [hi]\n`, 'f.yaml'),
    /f\.yaml: .*fixtures.*refunds/,
  );
  assert.throws(
    () => parseSuite(`fixtures:\n  /r: { body: x, delay: 5 }\ncases:\n  - id: a\n    turns: [hi]\n`, 'f.yaml'),
    /f\.yaml: .*fixtures\.\/r.*delay/,
  );
});
