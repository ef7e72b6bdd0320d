/**
 * Chunk invariance: the same protocol text fed in chunks of 1, 3, 7, 50 and random sizes yields
 * identical results, preamble, order, structural events and concatenated deltas.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ChannelStreamParser } from '../../../core/channels';
import { PROTOCOL_SPECS, SOURCES, chunk, comparable, run } from './helpers';

const NAMES = [
  'thinking',
  'ReactDecisionOutV2',
  'code',
  'answer',
  'followup',
  'summary',
  'page',
  'notes',
  'usage',
  'Answer',
  'x',
];

const fragment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES).map((n) => `<channel:${n}>`) },
  { weight: 5, arbitrary: fc.constantFrom(...NAMES).map((n) => `</channel:${n}>`) },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      'hello ',
      'world',
      '\n',
      '`',
      '``',
      '```',
      '```json\n',
      '\n```\n',
      '\\',
      '\\`',
      '"',
      '\\"',
      '{',
      '}',
      '[',
      ']',
      '{"action":"complete","final_answer":"hi [[S:1]] <channel:answer> `x`"}',
      '{"followups":["a","b <channel:x>"]}',
      '{"a":1,"b":[1,{"c":"}"}],"d":null,"e":true}',
      ': ',
      ', ',
      '[[S:1]]',
      '[[S:1,3]]',
      '[[ S : 2-4 ]]',
      '[[S:3–1]]',
      '［［S：2］］',
      '[[S:99]]',
      '[[S:',
      '[[',
      '[[S:1',
      '[[USAGE:1,2]]',
      '[[USAGE:',
      '<',
      '</',
      '<channel:',
      '</channel:',
      '<channel:answer',
      '< channel:answer>',
      '<b>',
      '<Channel:answer>',
      '\u200B',
      '\uFEFF',
      '\u202E',
      '\u200D',
      '😀',
      'é',
      '\u00A0',
      '\t',
      '   ',
    ),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
);

const protocolText = fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(''));

const decisionText = fc
  .record({
    thinking: fc.string({ maxLength: 30 }),
    answer: fc.array(
      fc.constantFrom(
        'text ',
        '[[S:1]]',
        '[[S:2,3]]',
        '`code <channel:x>`',
        '\n```\n<channel:a>\n```\n',
        '[[S:9]]',
        '😀',
      ),
      { maxLength: 10 },
    ),
    finalAnswer: fc.string({ maxLength: 30 }),
    code: fc.string({ maxLength: 30 }),
    fenced: fc.boolean(),
  })
  .map(({ thinking, answer, finalAnswer, code, fenced }) => {
    const json = JSON.stringify({
      action: 'complete',
      final_answer: finalAnswer,
      notes: 'n',
      tool_call: { tool_id: 'x', params: { a: [1, 2] } },
    });
    const body = fenced ? `\`\`\`json\n${json}\n\`\`\`` : json;
    return (
      `<channel:thinking>${thinking.replace(/[<`]/g, '')}</channel:thinking>` +
      `<channel:ReactDecisionOutV2>${body}</channel:ReactDecisionOutV2>` +
      `<channel:code>${code.replace(/</g, '')}</channel:code>` +
      `<channel:answer>${answer.join('')}</channel:answer>` +
      `<channel:followup>{"followups":["a","b"]}</channel:followup>`
    );
  });

const randomSizes = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 });

function check(text: string, sizes: number[], stripUsage: boolean): void {
  const options = { sources: SOURCES, stripUsage };
  const whole = comparable(run([text], PROTOCOL_SPECS, options));
  for (const size of [1, 3, 7, 50]) {
    assert.deepEqual(comparable(run(chunk(text, size), PROTOCOL_SPECS, options)), whole, `chunk size ${size}`);
  }
  assert.deepEqual(comparable(run(chunk(text, sizes), PROTOCOL_SPECS, options)), whole, `sizes ${sizes.join(',')}`);
}

describe('chunk invariance (property)', () => {
  it('random protocol-ish texts', () => {
    fc.assert(
      fc.property(protocolText, randomSizes, fc.boolean(), (text, sizes, stripUsage) => check(text, sizes, stripUsage)),
      { numRuns: 1000 },
    );
  });

  it('well-formed decision protocol texts', () => {
    fc.assert(
      fc.property(decisionText, randomSizes, fc.boolean(), (text, sizes, stripUsage) => {
        check(text, sizes, stripUsage);
        const r = run([text], PROTOCOL_SPECS, { sources: SOURCES, stripUsage });
        assert.equal(r.results.ReactDecisionOutV2!.error, undefined);
        assert.deepEqual(r.results.followup!.obj, { followups: ['a', 'b'] });
        assert.deepEqual(
          r.order.map((o) => o.channel),
          ['thinking', 'ReactDecisionOutV2', 'code', 'answer', 'followup'],
        );
        const attrs = r.structure.filter((s) => s.startsWith('attribute')).map((s) => s.split(' ')[2]!.split('=')[0]);
        assert.deepEqual(attrs, ['action', 'final_answer', 'notes', 'tool_call']);
      }),
      { numRuns: 500 },
    );
  });

  it('no answer delta ever ends in a partial citation or contains its close tag', () => {
    fc.assert(
      fc.property(decisionText, randomSizes, (text, sizes) => {
        const r = run(chunk(text, sizes), PROTOCOL_SPECS, { sources: SOURCES });
        for (const e of r.events) {
          if (e.kind !== 'delta' || e.channel !== 'answer') continue;
          assert.doesNotMatch(e.text, /\[\[S:[^\]]*$/, `partial citation leaked: ${JSON.stringify(e.text)}`);
          assert.ok(!e.text.includes('</channel:answer'), `tag leaked: ${JSON.stringify(e.text)}`);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('chunk invariance (exhaustive 2-way splits)', () => {
  const text =
    'pre<channel:thinking>t `<channel:answer>`</channel:thinking>' +
    '<channel:ReactDecisionOutV2>```json\n{"action":"complete","final_answer":"a \\u00e9 [[S:1]] <channel:x>"}\n```</channel:ReactDecisionOutV2>' +
    '<channel:answer>See [[S:1]], [[ S : 2-3 ]] and ［［S：5］］ [[USAGE:1]] 😀\u200B</channel:answer><channel:page>x[[S:1,9]]</channel:page>';
  it('every split position of a full protocol text gives the whole-text outcome', () => {
    for (const stripUsage of [false, true]) {
      const options = { sources: SOURCES, stripUsage };
      const whole = comparable(run([text], PROTOCOL_SPECS, options));
      for (let i = 0; i <= text.length; i++) {
        assert.deepEqual(
          comparable(run([text.slice(0, i), text.slice(i)], PROTOCOL_SPECS, options)),
          whole,
          `split at ${i}`,
        );
      }
    }
  });
});

describe('minimal hold-back (property)', () => {
  const safe = fc.string({
    unit: fc.constantFrom(...'abc xyz.,;:!?()\n\t-_=+*#é'.split('')),
    minLength: 1,
    maxLength: 30,
  });
  it('plain content is emitted in full on every push', () => {
    fc.assert(
      fc.property(fc.array(safe, { minLength: 1, maxLength: 15 }), (pieces) => {
        const p = new ChannelStreamParser(PROTOCOL_SPECS, { sources: SOURCES, stripUsage: true });
        p.push('<channel:answer>');
        for (const piece of pieces) {
          const text = p
            .push(piece)
            .flatMap((e) => (e.kind === 'delta' ? [e.text] : []))
            .join('');
          assert.equal(text, piece);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the parser never holds more than one undecided tag or backtick run', () => {
    fc.assert(
      fc.property(protocolText, randomSizes, (text, sizes) => {
        const p = new ChannelStreamParser(PROTOCOL_SPECS, { sources: SOURCES, stripUsage: true });
        let fed = '';
        for (const c of chunk(text, sizes)) {
          fed += c;
          p.push(c);
          // At most one undecided tag (≤ 75 chars) or an unfinished backtick run / escape.
          assert.ok(p.heldChars <= Math.max(75, longestBacktickRun(fed) + 1), `held ${p.heldChars}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

function longestBacktickRun(s: string): number {
  let best = 0;
  for (const m of s.matchAll(/`+/g)) best = Math.max(best, m[0].length);
  return best;
}
