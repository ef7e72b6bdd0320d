/** A request's cassette shape: what moves between two runs of the same case is replaced. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestShape } from '../../../core/evals/cassette';

const request = (result: string) => ({
  system: [{ text: 'sys' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: result }] }],
});

test('requestShape: memory-search scores (their recency lift moves with time) do not change the shape', () => {
  const hit = (score: number) => JSON.stringify({ query: 'colour', results: [{ path: 'ar:turn_1', score }] });
  assert.equal(requestShape(request(hit(0.060606)), 'c1'), requestShape(request(hit(0.060605)), 'c1'));
  // Everything else still counts.
  assert.notEqual(
    requestShape(request(hit(0.06)), 'c1'),
    requestShape(request(hit(0.06).replace('turn_1', 'turn_2')), 'c1'),
  );
});
