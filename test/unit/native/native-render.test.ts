import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeBlock, type Block } from '../../../core/timeline/block';
import type { ContentPart, ModelMessage } from '../../../core/model/provider';
import { visibleItems, roundOpen, ROUND_CLOSE, EMPTY_ROUND_HINT } from '../../../core/timeline/render';
import {
  buildNativeSystemPrompt,
  layoutNative,
  renderNative,
  STEER_CANCELLED_RESULT,
  unframe,
} from '../../../core/model/native-render';
import { NativeToolNames } from '../../../core/model/native-tool-names';

const TS = '2026-11-21T10:00:00.000Z';
const NOW = Date.parse(TS);
const names = new NativeToolNames(['react.write', 'web_search']);

const header = (t: string) =>
  makeBlock({ type: 'turn.header', author: 'system', turn_id: t, ts: TS, key: 'header', text: '' });
const prompt = (t: string, text = `question of ${t}`) =>
  makeBlock({ type: 'user.prompt', author: 'user', turn_id: t, ts: TS, path: `ar:${t}.user.prompt`, text });
const notes = (t: string, r: number, text: string) =>
  makeBlock({
    type: 'react.notes',
    author: 'assistant',
    turn_id: t,
    ts: TS,
    key: `r${r}`,
    path: `ar:${t}.react.notes.r${r}`,
    text,
  });
const start = (t: string, id: string) =>
  makeBlock({
    type: 'react.round.start',
    author: 'react',
    turn_id: t,
    ts: TS,
    key: id,
    call_id: id,
    path: `ar:${t}.react.round.start.${id}`,
    text: 'thinking',
  });
const call = (
  t: string,
  id: string,
  toolId = 'web_search',
  params: Record<string, unknown> = { query: id },
  useId?: string,
) =>
  makeBlock({
    type: 'react.tool.call',
    author: 'assistant',
    turn_id: t,
    ts: TS,
    key: id,
    call_id: id,
    path: `tc:${t}.${id}.call`,
    mime: 'application/json',
    text: JSON.stringify({ tool_id: toolId, tool_call_id: id, params }),
    meta: { tool_id: toolId, ...(useId ? { provider_tool_use_id: useId } : {}) },
  });
const result = (t: string, id: string, text = `result of ${id}`, ok = true) =>
  makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: t,
    ts: TS,
    key: id,
    call_id: id,
    path: `tc:${t}.${id}.result`,
    mime: 'text/plain',
    text,
    meta: { tool_id: 'web_search', ok },
  });
const steer = (t: string, id: string) =>
  makeBlock({
    type: 'user.steer',
    author: 'user',
    turn_id: t,
    ts: TS,
    key: id,
    path: `ar:${t}.external.steer.${id}`,
    text: 'stop and answer',
    meta: { message_id: id },
  });
const completion = (t: string, text: string) =>
  makeBlock({
    type: 'assistant.completion',
    author: 'assistant',
    turn_id: t,
    ts: TS,
    key: 'r9',
    path: `ar:${t}.assistant.completion`,
    text,
    meta: {},
  });

function layout(blocks: Block[], current: string, tail = ['[ANNOUNCE]']) {
  return layoutNative(visibleItems(blocks, current), names, new Set(), tail);
}

/** The provider rules: user first and last, roles alternate, every tool_use answered first thing in the next user message. */
function assertValid(messages: ModelMessage[]): void {
  assert.ok(messages.length > 0);
  assert.equal(messages[0]!.role, 'user');
  assert.equal(messages.at(-1)!.role, 'user');
  messages.forEach((m, i) => {
    assert.ok(m.content.length > 0, `message ${i} is empty`);
    if (i > 0) assert.notEqual(m.role, messages[i - 1]!.role, `messages ${i - 1} and ${i} share a role`);
    for (const p of m.content)
      if (p.type === 'text') assert.ok(p.text.trim() !== '', `message ${i} has a blank text part`);
    const uses =
      m.role === 'assistant'
        ? m.content.filter((p): p is Extract<ContentPart, { type: 'tool_use' }> => p.type === 'tool_use')
        : [];
    if (m.role === 'user') {
      const prev = i > 0 ? messages[i - 1]!.content.flatMap((p) => (p.type === 'tool_use' ? [p.id] : [])) : [];
      const firstNonResult = m.content.findIndex((p) => p.type !== 'tool_result');
      const resultIds = m.content.flatMap((p) => (p.type === 'tool_result' ? [p.toolUseId] : []));
      if (firstNonResult >= 0)
        assert.ok(
          m.content.slice(firstNonResult).every((p) => p.type !== 'tool_result'),
          `message ${i}: tool_result after other content`,
        );
      assert.deepEqual(
        [...resultIds].sort(),
        [...prev].sort(),
        `message ${i}: results do not match the previous tool_uses`,
      );
    }
    if (uses.length > 0) {
      assert.ok(i + 1 < messages.length, 'tool_use in the last message');
      const lastUse = m.content.map((p) => p.type).lastIndexOf('tool_use');
      assert.ok(
        m.content.slice(lastUse).every((p) => p.type === 'tool_use'),
        `message ${i}: text after a tool_use`,
      );
    }
  });
}

test('a round with notes renders as assistant text + tool_use, then the tool_result', () => {
  const t = 'turn_1';
  const blocks = [
    header(t),
    prompt(t),
    notes(t, 1, 'Searching the web'),
    start(t, 'tc_000000000001'),
    call(t, 'tc_000000000001', 'web_search', { query: 'x' }, 'toolu_A'),
    result(t, 'tc_000000000001'),
  ];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.equal(out.messages.length, 3);
  assert.deepEqual(out.messages[1], {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Searching the web' },
      { type: 'tool_use', id: 'toolu_A', name: 'web_search', input: { query: 'x' } },
    ],
  });
  const first = out.messages[2]!.content[0]!;
  assert.equal(first.type, 'tool_result');
  assert.equal(first.type === 'tool_result' && first.toolUseId, 'toolu_A');
  assert.match(first.type === 'tool_result' ? first.content : '', /result of tc_000000000001/);
  assert.doesNotMatch(first.type === 'tool_result' ? first.content : '', /ROUND|└/);
  assert.deepEqual(out.paired, ['tc_000000000001']);
  assert.deepEqual(out.synthetic, []);
});

test('parallel calls share one assistant message; results come first in the next user message', () => {
  const t = 'turn_1';
  const [a, b] = ['tc_00000000000a', 'tc_00000000000b'];
  const blocks = [
    header(t),
    prompt(t),
    start(t, a),
    call(t, a, 'react.write', { path: 'n.md', content: 'hi' }),
    start(t, b),
    call(t, b),
    result(t, a),
    result(t, b, 'boom', false),
  ];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.deepEqual(
    out.messages[1]!.content.map((p) => p.type === 'tool_use' && [p.id, p.name]),
    [
      [a, 'react_write'],
      [b, 'web_search'],
    ],
  );
  const user = out.messages[2]!.content;
  assert.deepEqual(
    user.map((p) => p.type),
    ['tool_result', 'tool_result', 'text'],
  );
  assert.equal(user[1]!.type === 'tool_result' && user[1]!.isError, true);
  assert.deepEqual(out.paired, [a, b]);
});

test('a call cancelled by a steer gets a synthetic tool_result before the steer text', () => {
  const t = 'turn_1';
  const [a, b] = ['tc_00000000000a', 'tc_00000000000b'];
  const blocks = [header(t), prompt(t), start(t, a), call(t, a), start(t, b), call(t, b), result(t, a), steer(t, 'm2')];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.deepEqual(out.synthetic, [b]);
  const user = out.messages[2]!.content;
  assert.deepEqual(
    user.map((p) => p.type),
    ['tool_result', 'tool_result', 'text', 'text'],
  );
  assert.deepEqual(user[1], { type: 'tool_result', toolUseId: b, content: STEER_CANCELLED_RESULT, isError: true });
  assert.match(user[2]!.type === 'text' ? user[2]!.text : '', /STEER DURING TURN/);
});

test('a round cancelled before any result: every call is answered synthetically, then the next round follows', () => {
  const t = 'turn_1';
  const [a, b] = ['tc_00000000000a', 'tc_00000000000b'];
  const blocks = [
    header(t),
    prompt(t),
    start(t, a),
    call(t, a),
    notes(t, 2, 'Trying again'),
    start(t, b),
    call(t, b),
    result(t, b),
  ];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.deepEqual(out.synthetic, [a]);
  assert.deepEqual(
    out.messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user'],
  );
  assert.deepEqual(out.messages[2]!.content, [
    { type: 'tool_result', toolUseId: a, content: STEER_CANCELLED_RESULT, isError: true },
  ]);
});

test('a late result whose call was already answered synthetically renders as text', () => {
  const t = 'turn_1';
  const a = 'tc_00000000000a';
  const blocks = [header(t), prompt(t), call(t, a), steer(t, 'm1'), completion(t, 'stopped'), result(t, a)];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.deepEqual(out.synthetic, [a]);
  const last = out.messages.at(-1)!.content;
  assert.match(last[0]!.type === 'text' ? last[0]!.text : '', /\[TOOL RESULT tc_00000000000a\]/);
});

test('unknown tools and abridged calls render as text with their results', () => {
  const t = 'turn_1';
  const [a, b] = ['tc_00000000000a', 'tc_00000000000b'];
  const hidden = { ...call(t, b), hidden: true, replacement_text: '[HIDDEN] retrieve back with react.read' };
  const blocks = [header(t), prompt(t), call(t, a, 'no_such_tool'), result(t, a), hidden, result(t, b)];
  const out = layout(blocks, t);
  assertValid(out.messages);
  assert.deepEqual(out.paired, []);
  assert.equal(out.messages.length, 1);
  assert.ok(out.messages[0]!.content.every((p) => p.type === 'text'));
});

test('earlier turns: answers are assistant text without the render label; the question stays user text', () => {
  const blocks = [
    header('turn_1'),
    prompt('turn_1'),
    completion('turn_1', 'The answer is 42.'),
    header('turn_2'),
    prompt('turn_2', 'and why?'),
  ];
  const out = layout(blocks, 'turn_2');
  assertValid(out.messages);
  assert.deepEqual(out.messages[1], { role: 'assistant', content: [{ type: 'text', text: 'The answer is 42.' }] });
  assert.match(JSON.stringify(out.messages[2]), /and why\?/);
});

test('a stored result that renders to nothing is pointed at, not reported as cancelled', () => {
  const t = 'turn_1';
  const a = 'tc_00000000000a';
  const hidden = { ...result(t, a), hidden: true, replacement_text: '' };
  const out = layoutNative(
    visibleItems([header(t), prompt(t), call(t, a), hidden], t),
    names,
    new Set(),
    ['[ANNOUNCE]'],
    new Map([[a, `tc:${t}.${a}.result`]]),
  );
  assertValid(out.messages);
  assert.deepEqual(out.synthetic, []);
  assert.deepEqual(out.messages[2]!.content[0], {
    type: 'tool_result',
    toolUseId: a,
    content: `(result not shown; retrieve it with react.read tc:${t}.${a}.result)`,
  });
});

test('a provider tool_use id seen earlier in the timeline falls back to the call id', () => {
  const [a, b] = ['tc_00000000000a', 'tc_00000000000b'];
  const blocks = [
    header('turn_1'),
    prompt('turn_1'),
    call('turn_1', a, 'web_search', {}, 'toolu_1'),
    result('turn_1', a),
    completion('turn_1', 'ok'),
    header('turn_2'),
    prompt('turn_2'),
    call('turn_2', b, 'web_search', {}, 'toolu_1'),
    result('turn_2', b),
  ];
  const out = layout(blocks, 'turn_2');
  assertValid(out.messages);
  const ids = out.messages.flatMap((m) => m.content.flatMap((p) => (p.type === 'tool_use' ? [p.id] : [])));
  assert.deepEqual(ids, ['toolu_1', b]);
});

test('unframe removes open/close frames and the empty-round hint only', () => {
  assert.equal(unframe(`${roundOpen(3)}\nbody\n${EMPTY_ROUND_HINT}\n${ROUND_CLOSE}`), 'body');
  assert.equal(unframe(`${roundOpen(12)}`), '');
  assert.equal(unframe('plain ┌ text'), 'plain ┌ text');
});

test('tool names: dots become underscores, collisions and bad names are clear errors', () => {
  assert.equal(names.nameOf('react.write'), 'react_write');
  assert.equal(names.idOf('react_write'), 'react.write');
  assert.equal(names.idOf('made_up'), undefined);
  assert.throws(() => new NativeToolNames(['a.b', 'a_b']), /both map to the provider name "a_b"/);
  const specs = names.specs([{ name: 'react.write', description: 'Write a file', inputSchema: { type: 'object' } }]);
  assert.deepEqual(specs, [
    { name: 'react_write', description: '(react.write) Write a file', inputSchema: { type: 'object' } },
  ]);
});

test('renderNative: cached system prompt, mapped tools, SOURCES POOL + ANNOUNCE in the last user message', () => {
  const t = 'turn_1';
  const blocks = [header(t), prompt(t), call(t, 'tc_00000000000a'), result(t, 'tc_00000000000a')];
  const out = renderNative(
    {
      blocks,
      currentTurnId: t,
      systemPrompt: buildNativeSystemPrompt(),
      sources: [],
      announce: { iteration: 2, maxIterations: 5, nowIso: TS },
      tools: [{ name: 'web_search', description: 'Search', inputSchema: {} }],
      names,
    },
    { now: NOW, ttl: {} },
  );
  assertValid(out.messages);
  assert.deepEqual(
    out.system.map((s) => s.cache),
    [true],
  );
  assert.equal(out.tools[0]!.name, 'web_search');
  assert.match(JSON.stringify(out.messages.at(-1)), /ANNOUNCE/);
  assert.ok(out.breakpoints <= 4);
  assert.equal(buildNativeSystemPrompt(), buildNativeSystemPrompt());
});

test('property: any interleaving of rounds, results, steers, notes and answers lays out validly', () => {
  type Op =
    | { k: 'call'; tool: number }
    | { k: 'result'; which: number }
    | { k: 'notes' }
    | { k: 'steer' }
    | { k: 'answer' }
    | { k: 'turn' }
    | { k: 'hideCall'; which: number };
  const op = fc.oneof(
    fc.record({ k: fc.constant('call' as const), tool: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ k: fc.constant('result' as const), which: fc.nat() }),
    fc.record({ k: fc.constant('hideCall' as const), which: fc.nat() }),
    fc.constant({ k: 'notes' as const }),
    fc.constant({ k: 'steer' as const }),
    fc.constant({ k: 'answer' as const }),
    fc.constant({ k: 'turn' as const }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), fc.boolean(), (ops: Op[], withTail) => {
      let turnN = 1;
      let t = 'turn_1';
      let n = 0;
      const calls: string[] = [];
      const blocks: Block[] = [header(t), prompt(t)];
      for (const o of ops) {
        n++;
        if (o.k === 'call') {
          const id = `tc_${n.toString(16).padStart(12, '0')}`;
          calls.push(id);
          blocks.push(start(t, id), call(t, id, ['web_search', 'react.write', 'nope'][o.tool]!));
        } else if (o.k === 'result' && calls.length) {
          const id = calls[o.which % calls.length]!;
          if (!blocks.some((b) => b.type === 'react.tool.result' && b.call_id === id))
            blocks.push(result(blocks.find((b) => b.call_id === id)!.turn_id, id));
        } else if (o.k === 'hideCall' && calls.length) {
          const id = calls[o.which % calls.length]!;
          const i = blocks.findIndex((b) => b.type === 'react.tool.call' && b.call_id === id);
          blocks[i] = { ...blocks[i]!, hidden: true, replacement_text: '[HIDDEN] x' };
        } else if (o.k === 'notes') blocks.push(notes(t, n, `note ${n}`));
        else if (o.k === 'steer') blocks.push(steer(t, `m${n}`));
        else if (o.k === 'answer') blocks.push(completion(t, `answer ${n}`));
        else if (o.k === 'turn') {
          t = `turn_${++turnN}`;
          blocks.push(header(t), prompt(t));
        }
      }
      const out = layout(blocks, t, withTail ? ['[ANNOUNCE]'] : []);
      if (out.messages.at(-1)?.role === 'assistant' && !withTail)
        out.messages.push({ role: 'user', content: [{ type: 'text', text: 'tail' }] });
      assertValid(out.messages);
      const uses = out.messages.flatMap((m) => m.content.flatMap((p) => (p.type === 'tool_use' ? [p.id] : [])));
      assert.equal(new Set(uses).size, uses.length, 'a tool_use id appears twice');
    }),
    { numRuns: 500 },
  );
});
