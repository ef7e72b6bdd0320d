import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  interpretDecision,
  decisionPrefixViolation,
  type DecisionInterpretation,
  type NoticeCode,
} from '../../../core/decision';
import { COMPLETE, EXIT, THINK, call, decisionChannel, extendedRegistry, fenced, registry, response } from './helpers';

function fails(raw: string, ...codes: NoticeCode[]): Extract<DecisionInterpretation, { ok: false }> {
  const r = interpretDecision(raw, registry);
  assert.equal(r.ok, false, `expected failure ${codes.join(', ')}, got ${JSON.stringify(r)}`);
  if (r.ok) throw new Error('unreachable');
  assert.deepEqual(
    r.notices.map((n) => n.code),
    codes,
  );
  assert.equal(r.raw, raw);
  for (const n of r.notices) assert.equal(n.severity, 'error');
  return r;
}

function succeeds(raw: string, reg = registry): Extract<DecisionInterpretation, { ok: true }> {
  const r = interpretDecision(raw, reg);
  assert.equal(r.ok, true, JSON.stringify(r));
  if (!r.ok) throw new Error('unreachable');
  return r;
}

test('call_tool: fenced JSON, params validated with defaults, thinking and notes kept', () => {
  const r = succeeds(`${THINK}\n${fenced(call('web_search', { query: 'temporal' }, 'searching'))}`);
  assert.deepEqual(r.actions, [
    {
      action: 'call_tool',
      notes: 'searching',
      instance: 0,
      tool_call: { tool_id: 'web_search', params: { query: 'temporal', top_k: 5 } },
    },
  ]);
  assert.equal(r.thinking, 'Working on it.');
  assert.equal(r.notes, 'searching');
  assert.deepEqual(r.notices, []);
  assert.equal(r.answer, undefined);
});

test('a channel tag inside a fenced JSON string stays payload', () => {
  const json = call('react.write', {
    path: 'files/a.md',
    channel: 'canvas',
    content: 'x <channel:answer> y </channel:ReactDecisionOutV2> z',
  });
  const r = succeeds(`${THINK}${fenced(json)}`);
  const a = r.actions[0];
  assert.ok(a?.action === 'call_tool');
  assert.equal(a.tool_call.params.content, 'x <channel:answer> y </channel:ReactDecisionOutV2> z');
});

test('complete: answer comes from <channel:answer> when present, else from final_answer', () => {
  const withChannel = succeeds(
    response(
      [COMPLETE],
      '\n<channel:answer>Live answer [[S:1]].</channel:answer>\n<channel:followup>{"followups":["More?"," "]}</channel:followup>\n<channel:summary>Goal: x</channel:summary>',
    ),
  );
  assert.equal(withChannel.answer, 'Live answer [[S:1]].');
  assert.deepEqual(withChannel.followups, ['More?']);
  assert.equal(withChannel.summary, 'Goal: x');
  const fromField = succeeds(
    response([
      JSON.stringify({ action: 'complete', notes: '', final_answer: 'From field.', suggested_followups: ['Next'] }),
    ]),
  );
  assert.equal(fromField.answer, 'From field.');
  assert.deepEqual(fromField.followups, ['Next']);
  fails(response([JSON.stringify({ action: 'complete', notes: 'n' })]), 'final_answer_required');
});

test('exit: answer from the answer channel, else from final_answer, else none', () => {
  assert.equal(succeeds(response([EXIT])).answer, undefined);
  const r = succeeds(response([EXIT], '<channel:answer>Cannot help with that.</channel:answer>'));
  assert.deepEqual(r.actions, [{ action: 'exit', notes: 'nothing to do', instance: 0 }]);
  assert.equal(r.answer, 'Cannot help with that.');
  assert.equal(
    succeeds(response([JSON.stringify({ action: 'exit', notes: '', final_answer: 'Out of scope.' })])).answer,
    'Out of scope.',
  );
});

test('invalid followup JSON is a warning; suggested_followups is the fallback', () => {
  const r = succeeds(
    response(
      [JSON.stringify({ action: 'complete', notes: '', final_answer: 'a', suggested_followups: ['A'] })],
      '<channel:followup>["x"]</channel:followup>',
    ),
  );
  assert.deepEqual(r.followups, ['A']);
  assert.deepEqual(
    r.notices.map((n) => [n.code, n.severity]),
    [['invalid_followup_channel', 'warning']],
  );
});

test('answer and summary channels on a call_tool round are ignored with warnings', () => {
  const r = succeeds(
    response(
      [call('react.read', { paths: ['fi:a'] })],
      '<channel:answer>early</channel:answer><channel:summary>s</channel:summary>',
    ),
  );
  assert.equal(r.answer, undefined);
  assert.equal(r.summary, undefined);
  assert.deepEqual(
    r.notices.map((n) => n.code),
    ['answer_channel_without_completion', 'summary_without_completion'],
  );
});

test('code channel: passed through for a code-consuming tool, else code_channel_without_single_exec', () => {
  const code = '<channel:code>print(f"`{x}`")\n</channel:code>';
  const ok = succeeds(response([call('exec.python', {})], code), extendedRegistry);
  assert.equal(ok.code?.trim(), 'print(f"`{x}`")');
  const single = interpretDecision(response([call('react.read', { paths: ['fi:a'] })], code), extendedRegistry);
  assert.equal(single.ok, false, 'one action that does not run code: nothing runs');
  assert.deepEqual(
    single.notices.map((n) => [n.code, n.severity]),
    [['code_channel_without_single_exec', 'error']],
  );
  const bundle = interpretDecision(
    response([call('react.read', { paths: ['fi:a'] }), call('react.plan', { mode: 'new', steps: ['a'] })], code),
    extendedRegistry,
    {
      multiAction: 'safe_fanout',
    },
  );
  assert.equal(bundle.ok, true, 'in a multi-action round the code is ignored and the actions run');
  assert.equal(bundle.ok && bundle.code, undefined);
  assert.deepEqual(
    bundle.notices.map((n) => [n.code, n.severity]),
    [['code_channel_without_single_exec', 'warning']],
  );
});

test('invalid_action', () => {
  const r = fails(response([JSON.stringify({ action: 'answer', notes: 'n' })]), 'invalid_action');
  assert.match(r.notices[0]!.message, /invalid action "answer"; use one of call_tool, complete, exit/);
  assert.equal(r.notes, 'n');
  fails(response([JSON.stringify({ notes: 'no action' })]), 'invalid_action');
});

test('missing_tool_id', () => {
  fails(response([JSON.stringify({ action: 'call_tool', notes: 'n' })]), 'missing_tool_id');
  fails(response([JSON.stringify({ action: 'call_tool', notes: 'n', tool_call: { params: {} } })]), 'missing_tool_id');
  fails(
    response([JSON.stringify({ action: 'call_tool', notes: 'n', tool_call: { tool_id: ' ', params: {} } })]),
    'missing_tool_id',
  );
});

test('unknown_tool lists the available tools', () => {
  const r = fails(response([call('web.search', { query: 'x' })]), 'unknown_tool');
  assert.match(
    r.notices[0]!.message,
    /unknown tool "web\.search"; available tools: react\.read, react\.write, react\.plan, react\.hide, react\.patch, react\.pull, react\.checkout, react\.rg, react\.memsearch, web_fetch, web_search/,
  );
  assert.deepEqual(r.notices[0]!.details?.known_tools, registry.ids());
});

test('invalid_params carries the zod issues', () => {
  const r = fails(response([call('react.plan', { mode: 'new' })]), 'invalid_params');
  assert.deepEqual(r.notices[0]!.details?.issues, [
    { path: 'steps', message: 'mode=new needs a non-empty steps list' },
  ]);
  assert.match(r.notices[0]!.message, /react\.plan: invalid params: steps: mode=new needs a non-empty steps list/);
  fails(
    response([
      JSON.stringify({ action: 'call_tool', notes: 'n', tool_call: { tool_id: 'react.read', params: ['x'] } }),
    ]),
    'invalid_params',
  );
  fails(response([call('web_search', { query: 'x', top_k: 'five' })]), 'invalid_params');
});

test('final_answer_with_tool_call and tool_call_with_final_answer', () => {
  fails(
    response([
      JSON.stringify({
        action: 'call_tool',
        notes: 'n',
        final_answer: 'done!',
        tool_call: { tool_id: 'web_search', params: { query: 'x' } },
      }),
    ]),
    'final_answer_with_tool_call',
  );
  fails(
    response([
      JSON.stringify({ action: 'complete', notes: 'n', tool_call: { tool_id: 'web_search', params: { query: 'x' } } }),
    ]),
    'tool_call_with_final_answer',
  );
  // an empty final_answer on call_tool is harmless
  succeeds(
    response([
      JSON.stringify({
        action: 'call_tool',
        notes: 'n',
        final_answer: '',
        tool_call: { tool_id: 'web_search', params: { query: 'x' } },
      }),
    ]),
  );
});

test('invalid_json and invalid_decision_schema', () => {
  fails(response(['{"action": "exit", "notes": "a"} {"action": "exit", "notes": "b"}']), 'invalid_json');
  fails(response(['   ']), 'invalid_json');
  fails(response(['{"action": "exit",']), 'invalid_json');
  fails(response(['["exit"]']), 'invalid_decision_schema');
  fails(response(['{"action": "exit", "notes": 42}']), 'invalid_decision_schema');
});

test('decision_preamble_before_first_channel', () => {
  fails(`Sure! Here is my decision.\n${THINK}${decisionChannel(EXIT)}`, 'decision_preamble_before_first_channel');
  succeeds(`  \n${THINK}${decisionChannel(EXIT)}`);
});

test('decision_first_channel_not_thinking', () => {
  fails(`${decisionChannel(EXIT)}${THINK}`, 'decision_first_channel_not_thinking');
  fails(`<channel:answer>hi</channel:answer>${THINK}${decisionChannel(EXIT)}`, 'decision_first_channel_not_thinking');
});

test('decision_missing_protocol_channels', () => {
  const r = fails(THINK, 'decision_missing_protocol_channels');
  assert.deepEqual(r.notices[0]!.details?.missing, ['ReactDecisionOutV2']);
  const plain = fails(EXIT, 'decision_missing_protocol_channels');
  assert.deepEqual(plain.notices[0]!.details?.missing, ['thinking', 'ReactDecisionOutV2']);
  fails(decisionChannel(EXIT), 'decision_first_channel_not_thinking', 'decision_missing_protocol_channels');
});

test('shape failures still report problems of the decision object', () => {
  fails(`hello ${THINK}${decisionChannel(call('nope', {}))}`, 'decision_preamble_before_first_channel', 'unknown_tool');
});

test('decisionPrefixViolation flags a bad prefix early (live guard)', () => {
  assert.equal(decisionPrefixViolation({ preamble: '', order: [] }), undefined);
  assert.equal(decisionPrefixViolation({ preamble: '', order: [{ channel: 'thinking', instance: 0 }] }), undefined);
  assert.equal(
    decisionPrefixViolation({ preamble: 'hi', order: [{ channel: 'thinking', instance: 0 }] })?.code,
    'decision_preamble_before_first_channel',
  );
  assert.equal(
    decisionPrefixViolation({ preamble: '', order: [{ channel: 'ReactDecisionOutV2', instance: 0 }] })?.code,
    'decision_first_channel_not_thinking',
  );
});

test('single-action mode: extra decision instances are ignored with multi_action_disabled', () => {
  const r = succeeds(response([call('react.read', { paths: ['fi:a'] }), COMPLETE]));
  assert.deepEqual(
    r.actions.map((a) => a.action),
    ['call_tool'],
  );
  assert.deepEqual(
    r.notices.map((n) => [n.code, n.instance]),
    [['multi_action_disabled', 1]],
  );
  const firstInvalid = succeeds(response([call('nope', {}), EXIT]));
  assert.deepEqual(firstInvalid.actions, [{ action: 'exit', notes: 'nothing to do', instance: 1 }]);
  assert.deepEqual(
    firstInvalid.notices.map((n) => n.code),
    ['unknown_tool'],
  );
});
