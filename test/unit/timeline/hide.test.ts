import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock } from '../../../core/timeline/block';
import { checkHide, hideRefusalNotice, hideReplacement } from '../../../core/timeline/hide';
import { applyUpdates } from '../../../core/timeline/prune';
import { renderTimeline } from '../../../core/timeline/render';
import { paths } from '../../../core/timeline/paths';
import { callId, iso, T0, turn } from './_render-fixtures';

const opts = { currentTurnId: 't2' };

function blocks() {
  return [...turn('t1', { rounds: 1, final: true }), ...turn('t2', { rounds: 6 })];
}

test('hide refused before the pre-tail checkpoint (hide_before_cache)', () => {
  const bs = blocks();
  // default offset 2: pre-tail = end of t2 round 4 (index 14); round 2's result sits before it
  const r = checkHide(bs, paths.toolResult('t2', callId('t2', 2)), opts);
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.code === 'hide_before_cache');
  assert.ok(!r.ok && /after the intermediate \(pre-tail\) cache point/.test(r.message));
  // the pre-tail block itself is not hideable either
  const atPreTail = checkHide(bs, paths.toolResult('t2', callId('t2', 4)), opts);
  assert.ok(!atPreTail.ok && atPreTail.code === 'hide_before_cache');
  // previous turn: before the cache point too
  const prev = checkHide(bs, paths.completion('t1'), opts);
  assert.ok(!prev.ok && prev.code === 'hide_before_cache');
});

test('hide refused beyond the editable tail budget (hide_too_old with tail_tokens and tail_limit)', () => {
  const bs = blocks();
  const path = paths.toolResult('t2', callId('t2', 5));
  const r = checkHide(bs, path, { ...opts, tailLimitTokens: 50 });
  assert.ok(!r.ok);
  assert.equal(r.code, 'hide_too_old');
  assert.equal(r.tail_limit, 50);
  assert.ok(r.tail_tokens! > 50);
  const notice = hideRefusalNotice(r, 't2', iso(T0), 1);
  assert.equal(notice.type, 'react.notice');
  assert.deepEqual(JSON.parse(notice.text!), {
    path,
    code: 'hide_too_old',
    message: r.message,
    tail_tokens: r.tail_tokens,
    tail_limit: 50,
  });
  // big tail content after the path pushes it out of the default 2000-token window
  const big = [...turn('t1', { rounds: 4, resultText: (n) => (n === 4 ? 'z'.repeat(9000) : 'ok') })];
  const far = checkHide(big, paths.toolResult('t1', callId('t1', 4)).replace('result', 'call'), {
    currentTurnId: 't1',
  });
  assert.ok(!far.ok && far.code === 'hide_too_old' && far.tail_tokens! > 2000 && far.tail_limit === 2000);
});

test('hide inside the tail: flags + replacement with a react.read handle; the first block keeps the text', () => {
  const bs = blocks();
  const id6 = callId('t2', 6);
  const path = paths.toolResult('t2', id6);
  // a second content block at the same path (react.read style)
  bs.push(
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: 't2',
      ts: iso(T0),
      key: 'more',
      call_id: id6,
      path,
      text: 'second part',
    }),
  );
  const r = checkHide(bs, path, { ...opts, replacement: 'search results: 10 rows about X' });
  assert.ok(r.ok);
  assert.equal(r.hiddenBlockIds.length, 2);
  assert.equal(
    r.replacementText,
    `search results: 10 rows about X\n\n(retrieve back with react.read(paths=["${path}"]))`,
  );
  assert.deepEqual(
    r.updates.map((u) => u.replacement_text),
    [r.replacementText, ''],
  );
  assert.equal(r.tail_limit, 2000);
  assert.ok(r.tokensHidden > 0 && r.tail_tokens >= r.tokensHidden);
  assert.equal(r.suppressPrevTurnCache, true);

  const after = applyUpdates(bs, r.updates);
  const out = renderTimeline(
    { blocks: after, currentTurnId: 't2', systemPrompt: 'S' },
    { now: T0, debug: true, suppressPrevTurnCache: true },
  );
  assert.ok(out.debugText!.includes('search results: 10 rows about X'));
  assert.ok(!out.debugText!.includes('second part'));
  // after a hide the previous-turn checkpoint collapses onto the pre-tail
  assert.deepEqual(
    out.checkpoints.map((c) => c.kind),
    ['previous_turn', 'tail'],
  );
  // hiding again: nothing visible left at that path
  const again = checkHide(after, path, opts);
  assert.ok(!again.ok && again.code === 'not_found');
});

test('replacement handling: empty → [HIDDEN] placeholder; text with react.read kept as is', () => {
  assert.equal(
    hideReplacement('tc:t1.tc_aaaaaaaaaaaa.result', ''),
    '[HIDDEN] retrieve back with react.read(paths=["tc:t1.tc_aaaaaaaaaaaa.result"])',
  );
  assert.equal(
    hideReplacement('tc:t1.tc_aaaaaaaaaaaa.result', 'see react.read(paths=[x])'),
    'see react.read(paths=[x])',
  );
});

test('conv:-prefixed paths are accepted; unknown paths are not_found; empty path throws', () => {
  const bs = blocks();
  const path = paths.toolResult('t2', callId('t2', 6));
  const r = checkHide(bs, `conv:${path}`, opts);
  assert.ok(r.ok);
  assert.equal(r.replacementText, `[HIDDEN] retrieve back with react.read(paths=["${path}"])`);
  const nf = checkHide(bs, 'tc:t2.tc_ffffffffffff.result', opts);
  assert.ok(!nf.ok && nf.code === 'not_found');
  assert.throws(() => checkHide(bs, '', opts), /path is required/);
});
