import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  failedDecisionBlocks,
  interpretDecision,
  notice,
  noticeBlock,
  noticeText,
  NOTICE_CODES,
} from '../../../core/decision';
import { BlockSchema } from '../../../core/timeline/block';
import { call, registry, response } from './helpers';

const TS = '2026-01-01T00:00:00.000Z';

test('noticeBlock builds a react.notice block with JSON text {code, message, ...}', () => {
  const n = notice('invalid_params', 'react.plan: invalid params', {
    instance: 0,
    details: { tool_id: 'react.plan', issues: [{ path: 'steps', message: 'x' }] },
  });
  const b = noticeBlock({ turnId: 'turn_1', ts: TS, round: 3, notice: n, index: 1, failedRound: true });
  assert.equal(BlockSchema.parse(b).type, 'react.notice');
  assert.equal(b.author, 'react');
  assert.equal(b.mime, 'application/json');
  assert.equal(b.id, 'turn_1/react.notice/3.1');
  assert.deepEqual(JSON.parse(b.text!), {
    code: 'protocol_violation.invalid_params',
    message: 'react.plan: invalid params',
    severity: 'error',
    instance: 0,
    tool_id: 'react.plan',
    issues: [{ path: 'steps', message: 'x' }],
  });
  assert.deepEqual(b.meta, {
    rel: 'call',
    iteration: 3,
    failed_round: true,
    code: 'invalid_params',
    severity: 'error',
    reason: 'invalid_params',
  });
  const warning = noticeBlock({
    turnId: 'turn_1',
    ts: TS,
    round: 3,
    notice: notice('multi_action_disabled', 'm', { severity: 'warning' }),
  });
  assert.deepEqual(warning.meta, {
    rel: 'call',
    iteration: 3,
    failed_round: false,
    code: 'multi_action_disabled',
    severity: 'warning',
  });
});

test('noticeText keeps code/message/severity when details reuse those keys', () => {
  const text = noticeText(notice('unknown_tool', 'm', { details: { code: 'other', tool_id: 't' } }));
  assert.deepEqual(JSON.parse(text), {
    code: 'protocol_violation.unknown_tool',
    message: 'm',
    severity: 'error',
    tool_id: 't',
  });
});

test('failedDecisionBlocks: react.notes, react.decision.raw, then one react.notice per notice', () => {
  const raw = response([call('nope', {}, 'trying the nope tool')]);
  const r = interpretDecision(raw, registry);
  assert.equal(r.ok, false);
  if (r.ok) return;
  const blocks = failedDecisionBlocks({
    turnId: 'turn_1',
    ts: TS,
    round: 2,
    raw: r.raw,
    notes: r.notes,
    notices: r.notices,
  });
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['react.notes', 'react.decision.raw', 'react.notice'],
  );
  assert.equal(blocks[0]!.text, 'trying the nope tool');
  assert.equal(blocks[1]!.text, raw);
  assert.equal(JSON.parse(blocks[2]!.text!).code, 'protocol_violation.unknown_tool');
  assert.equal(new Set(blocks.map((b) => b.id)).size, 3);
  // deterministic: same input, same blocks
  assert.deepEqual(
    failedDecisionBlocks({ turnId: 'turn_1', ts: TS, round: 2, raw: r.raw, notes: r.notes, notices: r.notices }),
    blocks,
  );
  const noNotes = failedDecisionBlocks({ turnId: 'turn_1', ts: TS, round: 2, raw: 'x', notices: [] });
  assert.deepEqual(
    noNotes.map((b) => b.type),
    ['react.decision.raw'],
  );
});

test('every notice code the issue names exists', () => {
  for (const code of [
    'invalid_action',
    'missing_tool_id',
    'unknown_tool',
    'invalid_params',
    'final_answer_with_tool_call',
    'decision_preamble_before_first_channel',
    'decision_first_channel_not_thinking',
    'decision_missing_protocol_channels',
    'path_not_first',
    'channel_not_second',
    'content_not_third',
    'kind_not_fourth',
    'multi_action_bundle_too_many_actions',
  ]) {
    assert.ok((NOTICE_CODES as readonly string[]).includes(code), code);
  }
});
