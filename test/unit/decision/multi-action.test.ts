import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalPath,
  interpretDecision,
  MAX_ACTIONS_PER_ROUND,
  parseMultiActionMode,
  strategyAllows,
  STRATEGY_MATRIX,
  type NoticeCode,
} from '../../../core/decision';
import { STRATEGY_TRAITS, type StrategyTrait } from '../../../core/tools';
import { COMPLETE, EXIT, call, extendedRegistry, response, write } from './helpers';

const X = true;
const O = false;
/** The ordered matrix from the reference: rows = first, columns = then. */
const EXPECTED: Record<StrategyTrait, [boolean, boolean, boolean, boolean]> = {
  //           exploration exploitation neutral unknown
  exploration: [X, O, X, O],
  exploitation: [X, X, X, O],
  neutral: [X, X, X, O],
  unknown: [O, O, O, O],
};

test('strategy matrix matches the reference table', () => {
  for (const first of STRATEGY_TRAITS) {
    STRATEGY_TRAITS.forEach((then, i) => {
      assert.equal(strategyAllows(first, then), EXPECTED[first][i], `${first} then ${then}`);
      assert.equal(STRATEGY_MATRIX[first][then], EXPECTED[first][i]);
    });
  }
});

/** One representative action per trait. */
const ACTION: Record<StrategyTrait | 'complete' | 'exit', string> = {
  exploration: call('react.read', { paths: ['fi:turn_1.files/a.md'] }),
  exploitation: write('files/out.md'),
  neutral: call('react.plan', { mode: 'new', steps: ['a', 'b'] }),
  unknown: call('legacy.tool', {}),
  complete: COMPLETE,
  exit: EXIT,
};

function bundle(decisions: string[]): { accepted: string[]; codes: NoticeCode[] } {
  const r = interpretDecision(response(decisions), extendedRegistry, { multiAction: 'safe_fanout' });
  assert.equal(r.ok, true, JSON.stringify(r));
  if (!r.ok) throw new Error('unreachable');
  return {
    accepted: r.actions.map((a) => (a.action === 'call_tool' ? a.tool_call.tool_id : a.action)),
    codes: r.notices.map((n) => n.code),
  };
}

type Row = [string, Array<keyof typeof ACTION>, number, NoticeCode | null];
const TABLE: Row[] = [
  // pairs of tools, every cell of the matrix
  ['exploration → exploration', ['exploration', 'exploration'], 2, null],
  ['exploration → exploitation', ['exploration', 'exploitation'], 1, 'multi_action_bundle_strategy_incompatible'],
  ['exploration → neutral', ['exploration', 'neutral'], 2, null],
  ['exploration → unknown', ['exploration', 'unknown'], 1, 'multi_action_bundle_unsafe_tool'],
  ['exploitation → exploration', ['exploitation', 'exploration'], 2, null],
  ['exploitation → neutral', ['exploitation', 'neutral'], 2, null],
  ['exploitation → unknown', ['exploitation', 'unknown'], 1, 'multi_action_bundle_unsafe_tool'],
  ['neutral → exploration', ['neutral', 'exploration'], 2, null],
  ['neutral → exploitation', ['neutral', 'exploitation'], 2, null],
  ['neutral → neutral', ['neutral', 'neutral'], 2, null],
  ['neutral → unknown', ['neutral', 'unknown'], 1, 'multi_action_bundle_unsafe_tool'],
  ['unknown → exploration', ['unknown', 'exploration'], 1, 'multi_action_bundle_strategy_incompatible'],
  ['unknown → exploitation', ['unknown', 'exploitation'], 1, 'multi_action_bundle_strategy_incompatible'],
  ['unknown → neutral', ['unknown', 'neutral'], 1, 'multi_action_bundle_strategy_incompatible'],
  // complete / exit
  ['neutral → complete', ['neutral', 'complete'], 2, null],
  ['neutral → exit', ['neutral', 'exit'], 2, null],
  ['exploration → complete', ['exploration', 'complete'], 1, 'multi_action_bundle_final_answer_after_non_neutral'],
  ['exploitation → complete', ['exploitation', 'complete'], 1, 'multi_action_bundle_final_answer_after_non_neutral'],
  ['exploitation → exit', ['exploitation', 'exit'], 1, 'multi_action_bundle_final_answer_after_non_neutral'],
  ['complete → neutral', ['complete', 'neutral'], 2, null],
  ['complete → exploration', ['complete', 'exploration'], 1, 'multi_action_bundle_non_neutral_after_final_answer'],
  ['complete → exploitation', ['complete', 'exploitation'], 1, 'multi_action_bundle_non_neutral_after_final_answer'],
  ['complete → exit', ['complete', 'exit'], 1, 'multi_action_bundle_mixed_actions'],
  // count limit: the third action is rejected whatever it is
  ['three neutral actions', ['neutral', 'neutral', 'neutral'], 2, 'multi_action_bundle_too_many_actions'],
  [
    'exploitation, exploration, complete',
    ['exploitation', 'exploration', 'complete'],
    2,
    'multi_action_bundle_too_many_actions',
  ],
  // a rejected action does not count against the limit
  [
    'exploration, exploitation, neutral',
    ['exploration', 'exploitation', 'neutral'],
    2,
    'multi_action_bundle_strategy_incompatible',
  ],
];

for (const [name, kinds, acceptedCount, code] of TABLE) {
  test(`safe_fanout: ${name} → ${acceptedCount} accepted${code ? `, ${code}` : ''}`, () => {
    const r = bundle(kinds.map((k) => ACTION[k]));
    assert.equal(r.accepted.length, acceptedCount, JSON.stringify(r));
    assert.deepEqual(r.codes, code ? [code] : []);
  });
}

test('accepted actions keep response order and their instance numbers', () => {
  const r = interpretDecision(response([ACTION.exploitation, ACTION.exploration]), extendedRegistry, {
    multiAction: 'safe_fanout',
  });
  assert.ok(r.ok);
  assert.deepEqual(
    r.actions.map((a) => a.instance),
    [0, 1],
  );
  assert.equal(r.notes, 'call react.write\ncall react.read');
});

test('two writes to one canonical path are rejected; different paths are fine', () => {
  assert.deepEqual(bundle([write('files/a.md'), write('./files//a.md', 'y')]).codes, [
    'multi_action_bundle_same_file_collision',
  ]);
  assert.deepEqual(bundle([write('files/a.md'), write('files/b.md')]), {
    accepted: ['react.write', 'react.write'],
    codes: [],
  });
});

test('tools that must run alone are rejected in bundles', () => {
  const exec = call('exec.python', {});
  assert.deepEqual(bundle([exec, ACTION.neutral]), {
    accepted: ['exec.python'],
    codes: ['multi_action_bundle_unsafe_tool'],
  });
  assert.deepEqual(bundle([ACTION.neutral, exec]), {
    accepted: ['react.plan'],
    codes: ['multi_action_bundle_unsafe_tool'],
  });
});

test('a lone unknown-strategy tool is accepted', () => {
  assert.deepEqual(bundle([ACTION.unknown]), { accepted: ['legacy.tool'], codes: [] });
});

test('invalid actions in a bundle get notices; the valid ones still run', () => {
  assert.deepEqual(bundle([call('nope', {}), ACTION.exploration]), {
    accepted: ['react.read'],
    codes: ['unknown_tool'],
  });
  const allBad = interpretDecision(response([call('nope', {}), '{']), extendedRegistry, { multiAction: 'safe_fanout' });
  assert.equal(allBad.ok, false);
  if (!allBad.ok)
    assert.deepEqual(
      allBad.notices.map((n) => n.code),
      ['unknown_tool', 'invalid_json'],
    );
});

test('rejection notices name the action and carry its instance', () => {
  const r = interpretDecision(response([ACTION.exploration, ACTION.exploitation]), extendedRegistry, {
    multiAction: 'safe_fanout',
  });
  assert.ok(r.ok);
  assert.equal(r.notices[0]?.instance, 1);
  assert.match(r.notices[0]!.message, /rejected action react\.write: exploitation after exploration \(react\.read\)/);
});

test('MAX_ACTIONS_PER_ROUND is 2 and the mode parser follows the env vocabulary', () => {
  assert.equal(MAX_ACTIONS_PER_ROUND, 2);
  for (const v of ['safe_fanout', 'fanout', 'on', 'TRUE', '1', 'yes'])
    assert.equal(parseMultiActionMode(v), 'safe_fanout', v);
  for (const v of [undefined, null, '', 'off', 'false', '0', 'no'])
    assert.equal(parseMultiActionMode(v), 'off', String(v));
  assert.throws(() => parseMultiActionMode('parallel'), /unknown multi-action mode "parallel"/);
});

test('canonicalPath', () => {
  assert.equal(canonicalPath('./files//a.md'), 'files/a.md');
  assert.equal(canonicalPath('files/./dir/'), 'files/dir');
  assert.equal(canonicalPath('files\\b.md'), 'files/b.md');
});
