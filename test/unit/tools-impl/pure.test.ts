/** Pure helpers of the tool implementations: write targets, params checks, SID rewriting, titles, read payloads. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveWriteTarget } from '../../../activities/tools/react-write';
import { checkToolParams, paramsNoticeBlocks } from '../../../activities/tools';
import { rewriteToolSids, withLocalSids } from '../../../store/sources-store';
import { cleanTitle, heuristicTitle, TITLE_MAX_CHARS } from '../../../core/turn/title';
import { sourcesReadPayload } from '../../../activities/tools/react-read';
import { planIdEntropy } from '../../../activities/tools/react-plan';
import { hideReason } from '../../../activities/tools/react-hide';
import { hideSuppressesPrevTurnCache } from '../../../core/timeline/hide';
import { makeBlock } from '../../../core/timeline/block';
import { createToolRegistry } from '../../../core/tools';

test('react.write targets: files/ by default, outputs/, fi: of the current turn only', () => {
  assert.deepEqual(resolveWriteTarget('turn_1', 'notes.md'), {
    area: 'files',
    rel: 'notes.md',
    logical: 'fi:turn_1.files/notes.md',
    key: 'turn_1/files/notes.md',
    mime: 'text/markdown',
  });
  assert.equal(resolveWriteTarget('turn_1', 'outputs/r/report.json').key, 'turn_1/outputs/r/report.json');
  assert.equal(resolveWriteTarget('turn_1', 'outputs/r/report.json').mime, 'application/json');
  assert.equal(resolveWriteTarget('turn_1', 'fi:turn_1.files/a/b.txt').logical, 'fi:turn_1.files/a/b.txt');
  assert.equal(resolveWriteTarget('turn_1', 'conv:fi:turn_1.outputs/x.csv').key, 'turn_1/outputs/x.csv');
  assert.equal(resolveWriteTarget('turn_1', 'turn_1/files/y.md').logical, 'fi:turn_1.files/y.md');
  assert.throws(
    () => resolveWriteTarget('turn_2', 'fi:turn_1.files/a.md'),
    /belongs to turn turn_1; only the current turn \(turn_2\)/,
  );
  assert.throws(() => resolveWriteTarget('turn_1', 'tc:turn_1.tc_0123456789ab.result'), /only current-turn files/);
  assert.throws(() => resolveWriteTarget('turn_1', '../../etc/passwd'), /traversal segment/);
  assert.throws(() => resolveWriteTarget('turn_1', 'files/a/../../b.md'), /traversal/);
  assert.throws(() => resolveWriteTarget('turn_1', '/etc/passwd'), /absolute paths are not allowed/);
  assert.throws(() => resolveWriteTarget('turn_1', 'a\\b.md'), /backslash/);
  assert.throws(() => resolveWriteTarget('turn_1', 'chart.png'), /binary format/);
  assert.throws(() => resolveWriteTarget('turn_1', '  '), /path is empty/);
});

test('params check: order notices (react.write) and schema issues; defaults applied; undeclared tools pass', () => {
  const registry = createToolRegistry();
  const bad = checkToolParams(registry, 'react.write', { channel: 'canvas', path: 'a.md', content: 'x' });
  assert.equal(bad.ok, false);
  if (!bad.ok) {
    assert.deepEqual(
      bad.notices.map((n) => n.code),
      ['path_not_first'],
    );
    assert.match(bad.text, /Nothing was run/);
    const [block] = paramsNoticeBlocks('turn_1', 'tc_000000000001', '2026-01-01T00:00:00Z', bad.notices);
    assert.equal(block!.type, 'react.notice');
    assert.equal(block!.call_id, 'tc_000000000001');
    assert.equal(JSON.parse(block!.text!).code, 'protocol_violation.path_not_first');
  }
  const values = checkToolParams(registry, 'react.plan', { mode: 'activate' });
  assert.equal(values.ok, false);
  if (!values.ok) assert.match(values.text, /plan_id: mode=activate needs plan_id/);
  const good = checkToolParams(registry, 'react.write', { path: 'a.md', channel: 'internal', content: 'x' });
  assert.deepEqual(good, { ok: true, params: { path: 'a.md', channel: 'internal', content: 'x', kind: 'display' } });
  assert.deepEqual(checkToolParams(registry, 'custom.tool', { any: 1 }), { ok: true, params: { any: 1 } });
  assert.equal(checkToolParams(registry, 'react.read', [1]).ok, false);
});

test('tool-local SIDs: explicit ones kept, others numbered by position around them', () => {
  const rows = withLocalSids([{ url: 'https://a' }, { url: 'https://b', sid: 1 }, { url: 'https://c' }]);
  assert.deepEqual(
    rows.map((r) => r.sid),
    [2, 1, 3],
  );
});

test('rewriteToolSids: JSON objects by url get pool sids first; sid fields and [[S:n]] tokens are remapped', () => {
  const rows = withLocalSids([{ url: 'https://example.com/a?utm_source=x' }, { url: 'https://example.com/b' }]);
  const mapping = { 1: 7, 2: 3 };
  const json = JSON.stringify({
    status: 'fetched',
    pages: [
      { url: 'https://example.com/a', title: 'A' },
      { url: 'https://example.com/b/', title: 'B' },
    ],
    note: 'see [[S:1,2]]',
  });
  const out = JSON.parse(rewriteToolSids(json, rows, mapping));
  assert.deepEqual(out.pages, [
    { sid: 7, url: 'https://example.com/a', title: 'A' },
    { sid: 3, url: 'https://example.com/b/', title: 'B' },
  ]);
  assert.equal(Object.keys(out.pages[0])[0], 'sid');
  assert.equal(out.note, 'see [[S:7,3]]');
  assert.equal(JSON.parse(rewriteToolSids('{"hits":[{"sid":2}]}', rows, mapping)).hits[0].sid, 3);
  assert.equal(rewriteToolSids('plain [[S:1]] and [[S:9]] text', rows, mapping), 'plain [[S:7]] and [[S:9]] text');
});

test('gate titles: cleaned, capped at a word, heuristic from the first sentence', () => {
  assert.equal(cleanTitle('  "Caching strategies for LLM agents."  '), 'Caching strategies for LLM agents');
  const long = cleanTitle('word '.repeat(40));
  assert.ok(long.length <= TITLE_MAX_CHARS && long.endsWith('…'), long);
  assert.equal(
    heuristicTitle('\n\nhow do I cache prompts? Also, more details follow.\nsecond line'),
    'How do I cache prompts?',
  );
  assert.equal(heuristicTitle('   '), 'New conversation');
});

test('sources read payload caps only text fields and reports per-row stats', () => {
  const p = sourcesReadPayload([{ sid: 2, title: 'T', url: 'https://x', text: 'abcdef', content: 'x'.repeat(50) }], 10);
  assert.equal(p.rows[0]!.text, 'abcdef');
  assert.match(p.rows[0]!.content!, /^x{10}…\[capped: 50 chars\]$/);
  assert.equal(p.rows[0]!.title, 'T');
  assert.deepEqual(p.items_stats, [{ sid: 2, url: 'https://x', title_chars: 1, text_chars: 6, content_chars: 50 }]);
});

test('plan id entropy and hide reasons are stable per call', () => {
  assert.match(planIdEntropy('c1', 'tc_000000000001'), /^[0-9a-f]{8}$/);
  assert.equal(planIdEntropy('c1', 'tc_000000000001'), planIdEntropy('c1', 'tc_000000000001'));
  assert.notEqual(planIdEntropy('c1', 'tc_000000000001'), planIdEntropy('c1', 'tc_000000000002'));
  assert.equal(hideReason('tc_1'), 'react.hide tc_1');
});

test('a successful hide in the turn asks the render to suppress the previous-turn checkpoint', () => {
  const result = (turn: string, meta: Record<string, unknown>) =>
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turn,
      ts: '2026-01-01T00:00:00Z',
      key: `${turn}-${Object.keys(meta).length}`,
      text: '{}',
      meta,
    });
  assert.equal(hideSuppressesPrevTurnCache([result('turn_1', { suppress_prev_turn_cache: true })], 'turn_1'), true);
  assert.equal(hideSuppressesPrevTurnCache([result('turn_1', { suppress_prev_turn_cache: true })], 'turn_2'), false);
  assert.equal(hideSuppressesPrevTurnCache([result('turn_2', {})], 'turn_2'), false);
});
