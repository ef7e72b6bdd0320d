/**
 * Sources selectors and conversation owner segments, table-driven against the reference
 * (§4 Path grammar / Sources selectors): the three selector forms, `,` lists, `-`/`:` ranges,
 * reversed ranges, pool order, and a foreign `conv_<id>.` owner resolving to no rows locally.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { localizePath, parsePath, paths } from '../../../core/timeline/paths';
import { resolvePath } from '../../../core/timeline/path-resolve';
import { selectSources, type SourceRow } from '../../../core/timeline/sources';
import { makeBlock } from '../../../core/timeline/block';

const CONV = 'c_0123456789';
const POOL: SourceRow[] = [3, 1, 5, 6, 2].map((sid) => ({ sid, title: `S${sid}`, url: `https://x.example/${sid}` }));

const SELECTORS: Array<[string, number[]]> = [
  // the three forms of parse_sources_pool_ref
  ['conv:so:sources_pool[1,3-5]', [3, 1, 5]],
  ['sources_pool[1,3-5]', [3, 1, 5]],
  [`conv:so:conv_${CONV}.sources_pool[1,3-5]`, [3, 1, 5]],
  // bare forms
  ['so:sources_pool[2]', [2]],
  [`so:conv_${CONV}.sources_pool[2]`, [2]],
  // `:` ranges, reversed ranges, spaces, duplicates, unknown SIDs
  ['so:sources_pool[5:6]', [5, 6]],
  ['so:sources_pool[6-5]', [5, 6]],
  ['so:sources_pool[ 2 , 1 , 2 ]', [1, 2]],
  ['so:sources_pool[4, 9]', []],
  // whole pool
  ['so:sources_pool', [3, 1, 5, 6, 2]],
  // another conversation: no rows here, whatever the selector
  ['conv:so:conv_c_other.sources_pool[1]', []],
  ['so:conv_c_other.sources_pool[1-6]', []],
  ['conv:so:conv_c_other.sources_pool', []],
];

for (const [selector, sids] of SELECTORS) {
  test(`selectSources(${selector}) -> [${sids.join(', ')}] in pool order`, () => {
    assert.deepEqual(
      selectSources(POOL, selector, CONV).map((r) => r.sid),
      sids,
    );
  });
  test(`resolvePath(${selector}) selects the same rows`, () => {
    const res = resolvePath([], selector, { conversationId: CONV });
    assert.equal(res.source, 'sources_pool');
    if (res.source !== 'sources_pool') return;
    assert.deepEqual(
      selectSources(POOL, res.sids).map((r) => r.sid),
      sids,
    );
  });
}

test('a foreign sources selector parses (it is not a malformed path) and keeps its owner', () => {
  const p = parsePath('conv:so:conv_c_other.sources_pool[1]');
  assert.deepEqual(p, { ns: 'so', kind: 'so.pool', sids: [1], conversationId: 'c_other' });
  assert.equal(paths.sourcesPool([3, 5, 6], 'c_other'), 'so:conv_c_other.sources_pool[3, 5-6]');
  const res = resolvePath([], 'conv:so:conv_c_other.sources_pool[1]', { conversationId: CONV });
  assert.equal(res.source === 'sources_pool' && res.foreignConversation, 'c_other');
  assert.equal(res.canonical, 'so:conv_c_other.sources_pool[1]');
});

test('without a current conversation, any owner segment is foreign', () => {
  assert.deepEqual(selectSources(POOL, `so:conv_${CONV}.sources_pool[1]`), []);
});

test('_format_sources_pool_path: ", " separator, runs joined', () => {
  assert.equal(paths.sourcesPool([6, 3, 5]), 'so:sources_pool[3, 5-6]');
});

test('localizePath strips the owner segment only when it names the current conversation', () => {
  const cases: Array<[string, string]> = [
    [`conv:fi:conv_${CONV}.turn_1.files/a.md`, 'conv:fi:turn_1.files/a.md'],
    [`ar:conv_${CONV}.turn_1.user.prompt`, 'ar:turn_1.user.prompt'],
    [`conv:so:conv_${CONV}.sources_pool[1]`, 'conv:so:sources_pool[1]'],
    ['conv:fi:conv_c_other.turn_1.files/a.md', 'conv:fi:conv_c_other.turn_1.files/a.md'],
    ['fi:turn_1.files/a.md', 'fi:turn_1.files/a.md'],
    ['sk:skill', 'sk:skill'],
  ];
  for (const [input, out] of cases) assert.equal(localizePath(input, CONV), out, input);
});

test('own-conversation refs of any namespace resolve locally; foreign block refs are a clear error', () => {
  const prompt = makeBlock({
    type: 'user.prompt',
    author: 'user',
    turn_id: 'turn_1',
    ts: '2026-01-01T00:00:00.000Z',
    key: 'p',
    path: 'ar:turn_1.user.prompt',
    text: 'hi',
  });
  const own = resolvePath([prompt], `conv:ar:conv_${CONV}.turn_1.user.prompt`, { conversationId: CONV });
  assert.equal(own.source === 'timeline' && own.blocks[0]?.text, 'hi');
  assert.throws(
    () => resolvePath([prompt], 'conv:ar:conv_c_other.turn_1.user.prompt', { conversationId: CONV }),
    /another conversation/,
  );
});
