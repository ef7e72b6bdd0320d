import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { requestChars, requestCharsWithSystem } from '../../../core/compaction/estimate';

test('requestCharsWithSystem gives the same numbers as requestChars of the request and of its system part', () => {
  const part = fc.oneof(fc.constant(undefined), fc.string(), fc.array(fc.jsonValue(), { maxLength: 4 }));
  fc.assert(
    fc.property(part, part, fc.array(fc.jsonValue(), { maxLength: 6 }), (system, tools, messages) => {
      const request = { system, tools, messages };
      assert.deepEqual(requestCharsWithSystem(request), {
        chars: requestChars(request),
        systemChars: requestChars({ system, tools, messages: [] }),
      });
    }),
    { numRuns: 300 },
  );
});
