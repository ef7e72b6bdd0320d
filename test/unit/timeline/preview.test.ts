import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { jsonShape, needsPreview, previewBlock, resolvePreview } from '../../../core/timeline/preview';
import { iso, T0 } from './_render-fixtures';

const cfg = resolvePreview();
const path = 'tc:t1.tc_aaaaaaaaaaaa.result';

function result(text: string, meta: Record<string, unknown> = {}) {
  return makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 't1',
    ts: iso(T0),
    path,
    mime: 'application/json',
    text,
    meta,
  });
}

test('large JSON result: bounded preview with size metadata, depth-limited shape and how to read more', () => {
  const payload = {
    query: 'x',
    hits: Array.from({ length: 400 }, (_, i) => ({
      id: i,
      doc: { title: `t${i}`, body: 'b'.repeat(40), tags: ['a'] },
    })),
  };
  const b = result(JSON.stringify(payload));
  const p = previewBlock(b, cfg);
  const text = p.text!;
  assert.ok(text.length < cfg.headChars + 1000);
  assert.match(text, /^\[LARGE TOOL RESULT — PREVIEW\]\npath: tc:t1\.tc_aaaaaaaaaaaa\.result\n/);
  assert.match(text, new RegExp(`size: ${b.text!.length} chars \\(~\\d+ tokens\\), mime application/json`));
  assert.match(
    text,
    /shape \(depth 3\): json \{"query": string, "hits": array\[400\] of \{"id": number, "doc": object\{3 keys\}\}\}/,
  );
  assert.match(
    text,
    /\[END PREVIEW — \d+ more chars stored; read more: react\.read\(items=\[\{"path":"tc:t1\.tc_aaaaaaaaaaaa\.result","offset_text_symbols":2000/,
  );
  assert.match(text, /react\.read\(paths=\["tc:t1\.tc_aaaaaaaaaaaa\.result"\]\)\]$/);
  assert.equal(p.meta['preview_of_chars'], b.text!.length);
  assert.equal(b.text, JSON.stringify(payload), 'stored block untouched');
});

test('large text result: line count shape', () => {
  const p = previewBlock(result('line\n'.repeat(5000)), cfg);
  assert.match(p.text!, /shape \(depth 3\): text, 5001 lines/);
});

test('small results and react.read results are not previewed', () => {
  const small = result('{"ok":true}');
  assert.equal(previewBlock(small, cfg), small);
  const read = result('r'.repeat(50_000), { tool_id: 'react.read' });
  assert.equal(needsPreview(read, cfg), false);
  assert.equal(previewBlock(read, cfg), read);
});

test('jsonShape is depth limited', () => {
  assert.equal(jsonShape({ a: { b: { c: { d: 1 } } } }, 2), '{"a": {"b": object{1 keys}}}');
  assert.equal(jsonShape([], 3), 'array[0]');
  assert.equal(jsonShape(null, 3), 'null');
  assert.equal(jsonShape('s'.repeat(100), 1), 'string(100)');
});

test('bad config is rejected', () => {
  assert.throws(() => resolvePreview({ headChars: 20_000 }), /headChars must not exceed/);
  assert.throws(() => resolvePreview({ shapeDepth: 0 }), /shapeDepth/);
});
