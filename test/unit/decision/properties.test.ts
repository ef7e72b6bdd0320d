import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { interpretDecision, NOTICE_CODES } from '../../../core/decision';
import { call, COMPLETE, EXIT, registry, response, THINK, write } from './helpers';

const CODES: ReadonlySet<string> = new Set(NOTICE_CODES);

const fragment = fc.oneof(
  fc.string(),
  fc.constantFrom(
    THINK,
    '<channel:thinking>',
    '</channel:thinking>',
    '<channel:ReactDecisionOutV2>',
    '</channel:ReactDecisionOutV2>',
    '<channel:answer>',
    '</channel:answer>',
    '<channel:code>',
    '```json\n',
    '\n```',
    '{',
    '}',
    COMPLETE,
    EXIT,
    call('web_search', { query: 'q' }),
    write('files/a.md'),
  ),
);

test('interpretDecision never throws and always explains a failure with known codes', () => {
  fc.assert(
    fc.property(fc.array(fragment, { maxLength: 12 }), fc.boolean(), (parts, fanout) => {
      const raw = parts.join('');
      const r = interpretDecision(raw, registry, { multiAction: fanout ? 'safe_fanout' : 'off' });
      for (const n of r.notices) assert.ok(CODES.has(n.code), n.code);
      if (r.ok) {
        assert.ok(r.actions.length >= 1 && r.actions.length <= (fanout ? 2 : 1));
      } else {
        assert.ok(r.notices.some((n) => n.severity === 'error'));
        assert.equal(r.raw, raw);
      }
    }),
    { numRuns: 500 },
  );
});

test('interpretation is deterministic', () => {
  fc.assert(
    fc.property(fc.array(fragment, { maxLength: 8 }), (parts) => {
      const raw = parts.join('');
      assert.deepEqual(interpretDecision(raw, registry), interpretDecision(raw, registry));
    }),
    { numRuns: 200 },
  );
});

test('any valid web_search query survives the round trip unchanged', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim().length > 0),
      (query) => {
        const r = interpretDecision(response([`\n\`\`\`json\n${call('web_search', { query })}\n\`\`\`\n`]), registry);
        assert.ok(r.ok, JSON.stringify(r));
        const a = r.actions[0];
        assert.ok(a?.action === 'call_tool');
        assert.equal(a.tool_call.params.query, query.trim());
      },
    ),
    { numRuns: 300 },
  );
});
