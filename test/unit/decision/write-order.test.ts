import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkParamOrder, interpretDecision, WRITE_PARAM_ORDER_CODES, type NoticeCode } from '../../../core/decision';
import { WRITE_PARAM_ORDER } from '../../../core/tools';
import { registry, response } from './helpers';

/** Writes the react.write params with keys in exactly the given order (raw JSON text). */
function writeWithOrder(keys: string[]): string {
  const values: Record<string, string> = {
    path: 'files/notes.md',
    channel: 'canvas',
    content: '# Notes',
    kind: 'file',
    scratchpad: 'x',
  };
  const params = keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(values[k])}`).join(', ');
  return `{"action": "call_tool", "notes": "n", "tool_call": {"tool_id": "react.write", "params": {${params}}}}`;
}

const CASES: Array<[string[], NoticeCode | null]> = [
  [['path', 'channel', 'content', 'kind'], null],
  [['path', 'channel', 'content'], null],
  [['channel', 'path', 'content', 'kind'], 'path_not_first'],
  [['content', 'path', 'channel', 'kind'], 'path_not_first'],
  [['kind', 'path', 'channel', 'content'], 'path_not_first'],
  [['path', 'content', 'channel', 'kind'], 'channel_not_second'],
  [['path', 'kind', 'channel', 'content'], 'channel_not_second'],
  [['path', 'channel', 'kind', 'content'], 'content_not_third'],
  [['path', 'channel', 'content', 'scratchpad', 'kind'], 'kind_not_fourth'],
];

for (const [keys, code] of CASES) {
  test(`react.write params ${keys.join(', ')} → ${code ?? 'accepted'}`, () => {
    const r = interpretDecision(response([writeWithOrder(keys)]), registry);
    if (code === null) {
      assert.equal(r.ok, true, JSON.stringify(r));
      if (r.ok)
        assert.deepEqual(
          Object.keys((r.actions[0] as { tool_call: { params: object } }).tool_call.params).slice(0, 3),
          ['path', 'channel', 'content'],
        );
      return;
    }
    assert.equal(r.ok, false);
    if (r.ok) return;
    // scratchpad is not a declared param: reported as invalid_params after the order notice
    const expected = keys.includes('scratchpad') ? [code, 'invalid_params'] : [code];
    assert.deepEqual(
      r.notices.map((n) => n.code),
      expected,
    );
    assert.deepEqual(r.notices[0]!.details?.got_order, keys);
    assert.match(r.notices[0]!.message, /path → channel → content → kind/);
  });
}

test('checkParamOrder works on the key order as written, including unknown extra keys', () => {
  assert.equal(
    checkParamOrder('react.write', { path: 'a', channel: 'canvas', content: 'c', kind: 'file' }, WRITE_PARAM_ORDER),
    undefined,
  );
  assert.equal(
    checkParamOrder(
      'react.write',
      { path: 'a', channel: 'canvas', content: 'c', extra: 1, kind: 'file' },
      WRITE_PARAM_ORDER,
    )?.code,
    'kind_not_fourth',
  );
  assert.equal(
    checkParamOrder('react.write', { channel: 'canvas', path: 'a' }, WRITE_PARAM_ORDER)?.code,
    'path_not_first',
  );
  assert.deepEqual(WRITE_PARAM_ORDER_CODES, [
    'path_not_first',
    'channel_not_second',
    'content_not_third',
    'kind_not_fourth',
  ]);
  // other tools with a declared order report invalid_params
  assert.equal(checkParamOrder('demo.tool', { b: 1, a: 2 }, ['a', 'b'])?.code, 'invalid_params');
});

test('order and value problems are reported together', () => {
  const raw =
    '{"action": "call_tool", "notes": "n", "tool_call": {"tool_id": "react.write", "params": {"channel": "chat", "path": "a.md", "content": "x"}}}';
  const r = interpretDecision(response([raw]), registry);
  assert.equal(r.ok, false);
  if (!r.ok)
    assert.deepEqual(
      r.notices.map((n) => n.code),
      ['path_not_first', 'invalid_params'],
    );
});
