/**
 * Every validation code of the reference runtime's `_validate_decision` (and the protocol-shape
 * checks), table-driven: one decision response per row, the codes it must produce.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpretDecision, noticeText, type NoticeCode } from '../../../core/decision';
import { THINK, call, decisionChannel, registry, response } from './helpers';

const j = (o: Record<string, unknown>): string => JSON.stringify(o);
const ANSWER = '<channel:answer>The answer.</channel:answer>';

interface Row {
  name: string;
  raw: string;
  /** Error codes (in order) when the round fails; `[]` when it is accepted. */
  codes: NoticeCode[];
}

const ROWS: Row[] = [
  // invalid_action:<x>
  { name: 'unknown action', raw: response([j({ action: 'answer', notes: '' })]), codes: ['invalid_action'] },
  { name: 'missing action', raw: response([j({ notes: 'n' })]), codes: ['invalid_action'] },
  // final_answer_with_tool_call
  {
    name: 'call_tool with a final_answer',
    raw: response([
      j({
        action: 'call_tool',
        notes: 'n',
        final_answer: 'x',
        tool_call: { tool_id: 'web_search', params: { query: 'q' } },
      }),
    ]),
    codes: ['final_answer_with_tool_call'],
  },
  {
    name: 'call_tool with a blank final_answer is fine',
    raw: response([
      j({
        action: 'call_tool',
        notes: 'n',
        final_answer: ' ',
        tool_call: { tool_id: 'web_search', params: { query: 'q' } },
      }),
    ]),
    codes: [],
  },
  // tool_call_with_final_answer
  {
    name: 'complete with a tool_call',
    raw: response([j({ action: 'complete', notes: '', final_answer: 'a', tool_call: { tool_id: 'web_search' } })]),
    codes: ['tool_call_with_final_answer'],
  },
  {
    name: 'exit with a tool_call',
    raw: response([j({ action: 'exit', notes: '', final_answer: 'a', tool_call: { tool_id: 'web_search' } })]),
    codes: ['tool_call_with_final_answer'],
  },
  // final_answer_with_notes
  {
    name: 'complete with final_answer and notes',
    raw: response([j({ action: 'complete', notes: 'done', final_answer: 'The answer.' })]),
    codes: ['final_answer_with_notes'],
  },
  {
    name: 'exit with final_answer and notes',
    raw: response([j({ action: 'exit', notes: 'stop', final_answer: 'Cannot.' })]),
    codes: ['final_answer_with_notes'],
  },
  {
    name: 'complete with final_answer and blank notes',
    raw: response([j({ action: 'complete', notes: '  ', final_answer: 'The answer.' })]),
    codes: [],
  },
  {
    name: 'complete with final_answer, no notes key',
    raw: response([j({ action: 'complete', final_answer: 'The answer.' })]),
    codes: [],
  },
  // missing_tool_id
  {
    name: 'call_tool without tool_call',
    raw: response([j({ action: 'call_tool', notes: 'n' })]),
    codes: ['missing_tool_id'],
  },
  {
    name: 'call_tool with a blank tool_id',
    raw: response([j({ action: 'call_tool', notes: 'n', tool_call: { tool_id: '  ', params: {} } })]),
    codes: ['missing_tool_id'],
  },
  // react.write parameter order
  {
    name: 'react.write: path not first',
    raw: response([call('react.write', { channel: 'canvas', path: 'a.md', content: 'x', kind: 'file' })]),
    codes: ['path_not_first'],
  },
  {
    name: 'react.write: channel not second',
    raw: response([call('react.write', { path: 'a.md', content: 'x', channel: 'canvas', kind: 'file' })]),
    codes: ['channel_not_second'],
  },
  {
    name: 'react.write: content not third',
    raw: response([call('react.write', { path: 'a.md', channel: 'canvas', kind: 'file', content: 'x' })]),
    codes: ['content_not_third'],
  },
  {
    name: 'react.write: in order',
    raw: response([call('react.write', { path: 'a.md', channel: 'canvas', content: 'x', kind: 'file' })]),
    codes: [],
  },
  // positional, as the reference checks keys[0..3]: a missing key is reported where it belongs
  {
    name: 'react.write: path missing',
    raw: response([call('react.write', { channel: 'canvas', content: 'x', kind: 'file' })]),
    codes: ['path_not_first', 'invalid_params'],
  },
  {
    name: 'react.write: channel missing',
    raw: response([call('react.write', { path: 'a.md', content: 'x' })]),
    codes: ['channel_not_second', 'invalid_params'],
  },
  {
    name: 'react.write: content missing',
    raw: response([call('react.write', { path: 'a.md', channel: 'canvas', kind: 'file' })]),
    codes: ['content_not_third', 'invalid_params'],
  },
  {
    name: 'react.write: kind omitted (it is last and optional)',
    raw: response([call('react.write', { path: 'a.md', channel: 'canvas', content: 'x' })]),
    codes: [],
  },
  // protocol shape
  {
    name: 'text before the first channel',
    raw: `Sure.\n${THINK}${decisionChannel(j({ action: 'exit', notes: '' }))}`,
    codes: ['decision_preamble_before_first_channel'],
  },
  {
    name: 'first channel not thinking',
    raw: `${decisionChannel(j({ action: 'exit', notes: '' }))}${THINK}`,
    codes: ['decision_first_channel_not_thinking'],
  },
  { name: 'no decision channel', raw: THINK, codes: ['decision_missing_protocol_channels'] },
];

for (const row of ROWS) {
  test(`validation code: ${row.name} -> ${row.codes.join(', ') || 'accepted'}`, () => {
    const r = interpretDecision(row.raw, registry);
    if (row.codes.length === 0) {
      assert.equal(r.ok, true, JSON.stringify(r));
      return;
    }
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.deepEqual(
      r.notices.filter((n) => n.severity === 'error').map((n) => n.code),
      row.codes,
    );
  });
}

test('final_answer_with_notes: the notice tells the model to leave notes empty', () => {
  const r = interpretDecision(
    response([j({ action: 'complete', notes: 'done', final_answer: 'The answer.' })]),
    registry,
  );
  assert.equal(r.ok, false);
  assert.match(r.notices[0]!.message, /notes/);
  assert.equal(r.ok ? undefined : r.notes, 'done');
});

test('complete with the answer channel and notes is accepted (notes are progress; the answer is the channel)', () => {
  const r = interpretDecision(response([j({ action: 'complete', notes: 'wrapping up' })], ANSWER), registry);
  assert.equal(r.ok, true, JSON.stringify(r));
});

test('final_answer_required: complete with neither final_answer nor <channel:answer>', () => {
  for (const decision of [
    j({ action: 'complete', notes: '' }),
    j({ action: 'complete', notes: '', final_answer: '  ' }),
  ]) {
    const r = interpretDecision(response([decision]), registry);
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.deepEqual(
      r.notices.map((n) => n.code),
      ['final_answer_required'],
    );
  }
  assert.equal(interpretDecision(response([j({ action: 'complete', notes: '' })], ANSWER), registry).ok, true);
  // exit may stop without an answer (its notes say why): a deliberate difference from the reference
  assert.equal(interpretDecision(response([j({ action: 'exit', notes: 'nothing to do' })]), registry).ok, true);
});

test('exit keeps its final_answer as the answer (it was dropped before)', () => {
  const r = interpretDecision(
    response([j({ action: 'exit', notes: '', final_answer: 'I cannot do that.' })]),
    registry,
  );
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.ok && r.answer, 'I cannot do that.');
});

test('code_channel_without_single_exec: one action that does not run code fails the round (nothing runs)', () => {
  const code = '<channel:code>print(1)</channel:code>';
  for (const decision of [
    call('react.read', { paths: ['fi:turn_1.files/a'] }),
    j({ action: 'complete', notes: '', final_answer: 'a' }),
  ]) {
    const r = interpretDecision(response([decision], code), registry);
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.deepEqual(
      r.notices.map((n) => [n.code, n.severity]),
      [['code_channel_without_single_exec', 'error']],
    );
  }
});

test('final_answer_with_tool_call: safe_fanout suppresses the answer with a warning and runs the tool', () => {
  const raw = response([
    j({
      action: 'call_tool',
      notes: 'n',
      final_answer: 'guess',
      tool_call: { tool_id: 'web_search', params: { query: 'q' } },
    }),
  ]);
  const r = interpretDecision(raw, registry, { multiAction: 'safe_fanout' });
  assert.equal(r.ok, true, JSON.stringify(r));
  if (!r.ok) return;
  assert.equal(r.actions[0]!.action, 'call_tool');
  assert.equal(r.answer, undefined);
  assert.deepEqual(
    r.notices.map((n) => [n.code, n.severity, n.details?.suppressed_text_symbols]),
    [['final_answer_with_tool_call', 'warning', 5]],
  );
  assert.equal(interpretDecision(raw, registry).ok, false, 'single-action mode rejects it');
});

test('invalid_action:<x> and protocol_violation.<code> in the notice the model reads', () => {
  const r = interpretDecision(response([j({ action: 'answer', notes: '' })]), registry);
  assert.equal(r.ok, false);
  assert.equal(JSON.parse(noticeText(r.notices[0]!)).code, 'protocol_violation.invalid_action:answer');
  const missing = interpretDecision(response([j({ notes: '' })]), registry);
  assert.equal(JSON.parse(noticeText(missing.notices[0]!)).code, 'protocol_violation.invalid_action');
  const notes = interpretDecision(response([j({ action: 'complete', notes: 'n', final_answer: 'a' })]), registry);
  assert.equal(JSON.parse(noticeText(notes.notices[0]!)).code, 'protocol_violation.final_answer_with_notes');
});
