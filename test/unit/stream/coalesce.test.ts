import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coalesceDeltas } from '../../../core/stream/coalesce';
import type { StreamEventInput } from '../../../store/stream-bus';

const d = (text: string, extra: Partial<StreamEventInput> = {}, round = 1): StreamEventInput =>
  ({
    kind: 'delta',
    channel: 'answer',
    instance: 0,
    payload: { text, round },
    turnId: 't1',
    attempt: 1,
    ...extra,
  }) as StreamEventInput;
const step: StreamEventInput = {
  kind: 'step',
  payload: { phase: 'thinking.done', round: 1 },
  turnId: 't1',
  attempt: 1,
};

test('adjacent deltas of one channel, instance, round, turn and attempt become one event with the texts joined', () => {
  const out = coalesceDeltas([d('Hel'), d('lo, '), d('world')]);
  assert.deepEqual(out, [d('Hello, world')]);
});

test('a different channel, instance, round, attempt or turn starts a new event; order is kept', () => {
  const events = [
    d('a'),
    d('b', { channel: 'thinking' }),
    d('c', { instance: 1 }),
    d('d', {}, 2),
    d('e', { attempt: 2 }),
    d('f', { turnId: 't2' }),
  ];
  assert.deepEqual(coalesceDeltas(events), events);
});

test('any other event ends a run of deltas and is kept as it is', () => {
  const out = coalesceDeltas([d('a'), d('b'), step, d('c'), d('d')]);
  assert.deepEqual(out, [d('ab'), step, d('cd')]);
});

test('deltas carrying more than text and round are never merged', () => {
  const withRef = { ...d('x'), payload: { text: 'x', round: 1, ref: 'S:1' } } as StreamEventInput;
  assert.deepEqual(coalesceDeltas([d('a'), withRef, d('b')]), [d('a'), withRef, d('b')]);
});

test('the input is not modified and an empty batch stays empty', () => {
  const events = [d('a'), d('b')];
  coalesceDeltas(events);
  assert.deepEqual(events, [d('a'), d('b')]);
  assert.deepEqual(coalesceDeltas([]), []);
});
