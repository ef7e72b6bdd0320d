import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTurnRef } from '../../../core/turn/ref';
import { turnRefOf } from '../../../core/turn/turn-ref-of';
import { recordedDecideInput } from '../../../core/turn/recorded-round';
import { TurnOptionsSchema } from '../../../core/turn/contracts';

const ids = { conversationId: 'c1', turnId: 'turn_2', turnIndex: 2 };
const agent = { name: 'support', hash: 'ab'.repeat(16) };

test('parseTurnRef: a ref round-trips; a bad field is an error naming it', () => {
  const ref = { ...ids, agent, overrides: { model: { provider: 'anthropic' as const }, maxRounds: 4 } };
  assert.deepEqual(parseTurnRef(ref), ref);
  assert.throws(() => parseTurnRef({ ...ids, turnIndex: 0 }), /^Error: turn\.turnIndex: /);
  assert.throws(() => parseTurnRef({ ...ids, agent: { name: 'x' } }), /^Error: turn\.agent\.hash: /);
  assert.throws(() => parseTurnRef({ ...ids, extra: 1 }), /turn: .*extra/);
  assert.throws(
    () => parseTurnRef({ ...ids, overrides: { model: { provider: 'nope' } } }, 'input.turn'),
    /^Error: input\.turn\.overrides\.model\.provider: /,
  );
  // The old name of maxRounds is read as maxRounds; maxRounds wins over it.
  assert.deepEqual(parseTurnRef({ ...ids, overrides: { maxIterations: 3 } }).overrides, { maxRounds: 3 });
  assert.deepEqual(parseTurnRef({ ...ids, overrides: { maxIterations: 3, maxRounds: 5 } }).overrides, {
    maxRounds: 5,
  });
});

test('TurnOptionsSchema: maxRounds, and the old maxIterations read as it', () => {
  assert.deepEqual(TurnOptionsSchema.parse({ maxIterations: 7, contextMaxTokens: 9000 }), {
    maxRounds: 7,
    contextMaxTokens: 9000,
  });
  assert.deepEqual(TurnOptionsSchema.parse({ maxRounds: 7 }), { maxRounds: 7 });
  assert.throws(() => TurnOptionsSchema.parse({ maxIterations: 0 }), /maxIterations/);
});

test("turnRefOf: the workflow's one mapping of a turn input (old names, empty model) to a ref", () => {
  assert.deepEqual(turnRefOf({ ...ids, options: {} }), ids, 'no overrides: none carried');
  assert.deepEqual(turnRefOf({ ...ids, options: { model: {} } }, agent), { ...ids, agent });
  assert.deepEqual(
    turnRefOf({ ...ids, options: { model: { provider: 'scripted' }, maxIterations: 3, contextMaxTokens: 5000 } }),
    { ...ids, overrides: { model: { provider: 'scripted' }, maxRounds: 3, contextMaxTokens: 5000 } },
  );
});

test('recordedDecideInput: a decide input recorded before TurnRef reads as one with it', () => {
  const round = { round: 3, mode: 'normal' as const, events: [], iteration: { index: 3, max: 15, base: 15, bonus: 0 } };
  const old = { ...ids, ...round, model: { provider: 'anthropic' as const }, contextMaxTokens: 8000, agent };
  assert.deepEqual(recordedDecideInput(old), {
    ...round,
    turn: { ...ids, agent, overrides: { model: { provider: 'anthropic' }, contextMaxTokens: 8000 } },
  });
  const now = { ...round, turn: { ...ids, agent } };
  assert.equal(recordedDecideInput(now), now);
});
