import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import {
  capJson,
  DEFAULT_TRUNCATION,
  recoveryHandle,
  resolveTruncation,
  truncateBlock,
  truncateText,
  truncateToolResult,
} from '../../../core/timeline/truncate';
import { iso, T0 } from './_render-fixtures';

const cfg = resolveTruncation();
const ts = iso(T0);

test('seed defaults', () => {
  assert.deepEqual(
    { ...DEFAULT_TRUNCATION },
    { textChars: 4000, toolResultChars: 400, listItems: 50, dictKeys: 80, base64Chars: 4000 },
  );
});

test('user / assistant text over 4000 chars is cut with a recovery handle', () => {
  const b = makeBlock({
    type: 'assistant.completion',
    author: 'assistant',
    turn_id: 't1',
    ts,
    path: 'ar:t1.assistant.completion',
    text: 'a'.repeat(5000),
  });
  const t = truncateBlock(b, cfg);
  assert.notEqual(t, b);
  assert.equal(t.text!.slice(0, 4000), 'a'.repeat(4000));
  assert.match(
    t.text!,
    /…\[truncated: showing 4000 of 5000 chars; full text: react\.read\(paths=\["ar:t1\.assistant\.completion"\]\)\]$/,
  );
  assert.equal(b.text!.length, 5000, 'input not mutated');
  const short = makeBlock({
    type: 'user.prompt',
    author: 'user',
    turn_id: 't1',
    ts,
    path: 'ar:t1.user.prompt',
    text: 'hi',
  });
  assert.equal(truncateBlock(short, cfg), short);
});

test('tool results: 400 chars, with the handle', () => {
  const b = makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 't1',
    ts,
    path: 'tc:t1.tc_aaaaaaaaaaaa.result',
    text: 'line\n'.repeat(200),
  });
  const t = truncateBlock(b, cfg);
  assert.ok(t.text!.startsWith('line\n'.repeat(80)));
  assert.match(
    t.text!,
    /showing 400 of 1000 chars; full result: react\.read\(paths=\["tc:t1\.tc_aaaaaaaaaaaa\.result"\]\)/,
  );
});

test('JSON tool results: lists capped at 50 items, objects at 80 keys, then the char cap', () => {
  const obj: Record<string, number> = {};
  for (let i = 0; i < 100; i++) obj[`k${i}`] = i;
  const { value, capped } = capJson({ list: Array.from({ length: 70 }, (_, i) => i), obj }, 50, 80);
  assert.equal(capped, true);
  const v = value as { list: unknown[]; obj: Record<string, unknown> };
  assert.equal(v.list.length, 51);
  assert.equal(v.list[50], '…[20 more items]');
  assert.equal(Object.keys(v.obj).length, 81);
  assert.equal(v.obj['…'], '[20 more keys]');
  // small enough after capping → structural placeholder only
  const loose = truncateToolResult(
    JSON.stringify(Array.from({ length: 300 }, () => 1)),
    { ...cfg, listItems: 3 },
    'tc:t1.tc_aaaaaaaaaaaa.result',
  );
  assert.match(
    loose,
    /^\[1,1,1,"…\[297 more items\]"\]\n…\[truncated: lists\/objects capped, original 601 chars; full result: react\.read/,
  );
  // not JSON after all: plain cut
  assert.match(
    truncateToolResult('{' + 'x'.repeat(600), cfg, undefined),
    /showing 400 of 601 chars; full result: no logical path/,
  );
});

test('base64 over 4000 chars becomes a text placeholder with the handle; small base64 stays', () => {
  const big = makeBlock({
    type: 'user.attachment',
    author: 'user',
    turn_id: 't1',
    ts,
    path: 'fi:t1.user.attachments/a.png',
    mime: 'image/png',
    base64: 'A'.repeat(4001),
  });
  const t = truncateBlock(big, cfg);
  assert.equal(t.base64, undefined);
  assert.equal(t.mime, 'text/markdown');
  assert.match(
    t.text!,
    /^\[image\/png payload omitted: 4001 base64 chars \(~3000 bytes\); load it with react\.read\(paths=\["fi:t1\.user\.attachments\/a\.png"\]\)\]$/,
  );
  const small = { ...big, base64: 'A'.repeat(4000) };
  assert.equal(truncateBlock(small, cfg), small);
});

test('summaries are never truncated; truncateText keeps short text as is', () => {
  const s = makeBlock({
    type: 'conv.working.summary',
    author: 'react',
    turn_id: 't1',
    ts,
    path: 'ws:t1.conv.working.summary',
    text: 's'.repeat(9000),
  });
  assert.equal(truncateBlock(s, cfg), s);
  assert.equal(truncateText('abc', 3, 'x'), 'abc');
  assert.equal(recoveryHandle(undefined), 'no logical path; not recoverable via react.read');
});

test('bad config is rejected', () => {
  assert.throws(() => resolveTruncation({ listItems: 0 }), /truncation\.listItems must be a positive integer/);
});
