import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  filterToolIds,
  isGlob,
  patternMatches,
  toolPatternIssue,
  unmatchedPatterns,
} from '../../../core/agents/tool-filter';

const IDS = [
  'react.read',
  'react.write',
  'react.plan',
  'web_fetch',
  'web_search',
  'exec.python',
  'mcp.github.create_issue',
  'mcp.github.list_issues',
  'mcp.jira.search',
];

test('an exact id allows that tool only', () => {
  assert.deepEqual(filterToolIds(IDS, ['web_fetch']), ['web_fetch']);
  assert.deepEqual(filterToolIds(IDS, ['web']), []);
});

test('* spans any characters, dots included', () => {
  assert.deepEqual(filterToolIds(IDS, ['*']), IDS);
  assert.deepEqual(filterToolIds(IDS, ['react.*']), ['react.read', 'react.write', 'react.plan']);
  assert.deepEqual(filterToolIds(IDS, ['web_*']), ['web_fetch', 'web_search']);
  assert.deepEqual(filterToolIds(IDS, ['mcp.github.*']), ['mcp.github.create_issue', 'mcp.github.list_issues']);
  assert.deepEqual(
    filterToolIds(IDS, ['mcp.*']),
    IDS.filter((id) => id.startsWith('mcp.')),
  );
  assert.deepEqual(filterToolIds(IDS, ['*.search']), ['mcp.jira.search']);
  assert.deepEqual(filterToolIds(IDS, ['mcp.*.list_*']), ['mcp.github.list_issues']);
});

test('the result keeps the registry order, not the pattern order', () => {
  assert.deepEqual(filterToolIds(IDS, ['web_fetch', 'react.read']), ['react.read', 'web_fetch']);
});

test('a leading ! removes what it matches, wherever it stands', () => {
  assert.deepEqual(
    filterToolIds(IDS, ['*', '!web_search']),
    IDS.filter((id) => id !== 'web_search'),
  );
  assert.deepEqual(
    filterToolIds(IDS, ['!mcp.*', '*']),
    IDS.filter((id) => !id.startsWith('mcp.')),
  );
  assert.deepEqual(filterToolIds(IDS, ['!react.read']), [], 'negative patterns alone allow nothing');
});

test('dots in a pattern are literal', () => {
  assert.deepEqual(filterToolIds(['reactxread', 'react.read'], ['react.read']), ['react.read']);
  assert.equal(patternMatches('react.*', 'reactxread'), false);
});

test('invalid patterns are named with the reason', () => {
  for (const bad of ['Web_fetch', 'web fetch', '', 'a..b', '.react', 'react.', 'react.**', '!!x', 'mcp/github', 'x?']) {
    assert.match(toolPatternIssue(bad) ?? '', /is not a tool pattern/, bad);
  }
  for (const good of ['*', 'react.*', '!web_*', 'mcp.github.*', 'a1.b_2'])
    assert.equal(toolPatternIssue(good), undefined);
  assert.throws(() => filterToolIds(IDS, ['Web']), /is not a tool pattern/);
  assert.equal(isGlob('web_*'), true);
  assert.equal(isGlob('web_fetch'), false);
});

test('unmatchedPatterns names the patterns no tool matches (typos)', () => {
  assert.deepEqual(unmatchedPatterns(IDS, ['react.*', 'web_serch', 'mcp.slack.*', '!exec.python', '!nope']), [
    'web_serch',
    'mcp.slack.*',
    '!nope',
  ]);
});

const segment = fc.stringMatching(/^[a-z][a-z0-9_]{0,5}$/);
const toolId = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('.'));
const ids = fc.uniqueArray(toolId, { maxLength: 12 });
/** A pattern built from an id by replacing some characters by * (never ** and never a bare segment edge). */
const patternFrom = (id: string, cuts: number[]) => {
  let out = id;
  for (const c of cuts) {
    const i = c % out.length;
    if (out[i] === '.' || out[i] === '*' || out[i - 1] === '*' || out[i + 1] === '*') continue;
    out = `${out.slice(0, i)}*${out.slice(i + 1)}`;
  }
  return out.replace(/\*+/g, '*');
};
const patterns = (pool: string[]) =>
  fc.array(
    fc
      .tuple(fc.constantFrom(...pool), fc.array(fc.nat(), { maxLength: 3 }), fc.boolean())
      .map(([id, cuts, neg]) => `${neg ? '!' : ''}${patternFrom(id, cuts)}`),
    { maxLength: 5 },
  );

test('property: the result is a subsequence of the ids, and each kept id matches a positive pattern and no negative one', () => {
  fc.assert(
    fc.property(
      ids.filter((l) => l.length > 0).chain((l) => fc.tuple(fc.constant(l), patterns([...l, 'zz', '*']))),
      ([list, pats]) => {
        const valid = pats.filter((p) => toolPatternIssue(p) === undefined);
        const kept = filterToolIds(list, valid);
        assert.deepEqual(
          kept,
          list.filter((id) => kept.includes(id)),
        );
        for (const id of list) {
          const allowed =
            valid.some((p) => !p.startsWith('!') && patternMatches(p, id)) &&
            !valid.some((p) => p.startsWith('!') && patternMatches(p, id));
          assert.equal(kept.includes(id), allowed, `${id} with ${JSON.stringify(valid)}`);
        }
      },
    ),
  );
});

test('property: * keeps everything, a pattern derived from an id matches that id, narrowing twice is narrowing once', () => {
  fc.assert(
    fc.property(ids, fc.array(fc.nat(), { maxLength: 3 }), (list, cuts) => {
      assert.deepEqual(filterToolIds(list, ['*']), list);
      for (const id of list) {
        const p = patternFrom(id, cuts);
        assert.equal(toolPatternIssue(p), undefined, p);
        assert.ok(patternMatches(p, id), `${p} should match ${id}`);
      }
      const some = list.slice(0, 2);
      const once = filterToolIds(list, some);
      assert.deepEqual(filterToolIds(once, some), once);
    }),
  );
});
