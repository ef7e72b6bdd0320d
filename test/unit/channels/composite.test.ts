import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChannelStreamParser,
  CompositeJsonStreamer,
  parseJsonLenient,
  stripFence,
  type ChannelEvent,
  type ChannelSpec,
  type CompositeOut,
} from '../../../core/channels';
import { chunk } from './helpers';

const SPECS: ChannelSpec[] = [{ name: 'decision', format: 'json', composite: true, marker: 'decision' }];

function attributes(outs: CompositeOut[]): Array<[string, unknown]> {
  return outs.flatMap((o) => (o.kind === 'attribute' ? [[o.key, o.value] as [string, unknown]] : []));
}

function streamAll(text: string, size: number): CompositeOut[] {
  const s = new CompositeJsonStreamer();
  const out: CompositeOut[] = [];
  for (const c of chunk(text, size)) out.push(...s.push(c));
  out.push(...s.finish());
  return out;
}

describe('CompositeJsonStreamer', () => {
  const cases: Array<[string, string, Array<[string, unknown]>]> = [
    [
      'flat object',
      '{"a":"x","b":2,"c":true,"d":null}',
      [
        ['a', 'x'],
        ['b', 2],
        ['c', true],
        ['d', null],
      ],
    ],
    [
      'nested values arrive whole',
      '{"t":{"id":"x","p":{"q":[1,"}"]}},"l":[{"a":"]"}]}',
      [
        ['t', { id: 'x', p: { q: [1, '}'] } }],
        ['l', [{ a: ']' }]],
      ],
    ],
    [
      'fenced with info word',
      '```json\n{ "a" : 1 ,\n "b" : "two" }\n```',
      [
        ['a', 1],
        ['b', 'two'],
      ],
    ],
    [
      'escapes in keys and values',
      '{"k\\"q":"v\\n\\u00e9\\"","n":-1.5e3}',
      [
        ['k"q', 'v\né"'],
        ['n', -1500],
      ],
    ],
    ['raw newline inside a string is tolerated', '{"a":"l1\nl2"}', [['a', 'l1\nl2']]],
    [
      'trailing primitive completes at finish',
      '{"a":1,"b":42',
      [
        ['a', 1],
        ['b', 42],
      ],
    ],
    ['unterminated string is not emitted', '{"a":1,"b":"open', [['a', 1]]],
    ['not an object', '["a","b"]', []],
    ['prose before the object turns it off', 'Sure: {"a":1}', []],
    ['empty object', '{}', []],
    ['malformed primitive stops the stream', '{"a":tru,"b":1}', []],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => {
      for (const size of [1, 2, 3, 7, 1000]) assert.deepEqual(attributes(streamAll(text, size)), want, `size ${size}`);
    });
  }

  it('emits each attribute before the object closes', () => {
    const s = new CompositeJsonStreamer();
    assert.deepEqual(attributes(s.push('{"action":"call_tool",')), [['action', 'call_tool']]);
    assert.deepEqual(attributes(s.push('"tool_call":{"tool_id":"web",')), []);
    assert.deepEqual(attributes(s.push('"params":{}}')), [['tool_call', { tool_id: 'web', params: {} }]]);
    assert.deepEqual(attributes(s.push(', "n": 3')), []);
    assert.deepEqual(attributes(s.push(' ')), [['n', 3]]);
    assert.deepEqual(attributes(s.push('}')), []);
  });

  it('streams string values piecewise; pieces concatenate to the value at any chunking', () => {
    const value = 'Hé said "hi"\n\t😀 \\ / \u2028 end';
    const text = `{"final_answer":${JSON.stringify(value)},"x":1}`;
    for (const size of [1, 2, 3, 5, 7, 50]) {
      const outs = streamAll(text, size);
      const pieces = outs
        .filter((o) => o.kind === 'attribute-delta' && o.key === 'final_answer')
        .map((o) => (o as { text: string }).text);
      assert.equal(pieces.join(''), value, `size ${size}`);
      if (size === 1) assert.ok(pieces.length > 10, 'streamed, not only at the end');
    }
  });

  it('holds a partial \\u escape until complete', () => {
    const s = new CompositeJsonStreamer();
    const deltas = (o: CompositeOut[]): string => o.map((x) => (x.kind === 'attribute-delta' ? x.text : '')).join('');
    assert.equal(deltas(s.push('{"a":"x\\u00')), 'x');
    assert.equal(deltas(s.push('e9y\\')), 'éy');
    assert.equal(deltas(s.push('\\z"}')), '\\z');
  });
});

describe('composite json through the parser', () => {
  it('attribute events reach the canvas marker before the channel closes', () => {
    const p = new ChannelStreamParser(SPECS);
    const seen: ChannelEvent[] = [];
    seen.push(...p.push('<channel:decision>```json\n{"action":"complete",'));
    const first = seen.filter((e) => e.kind === 'attribute');
    assert.deepEqual(first, [
      { kind: 'attribute', channel: 'decision', instance: 0, marker: 'canvas', key: 'action', value: 'complete' },
    ]);
    assert.ok(!seen.some((e) => e.kind === 'complete'));
    seen.push(...p.push('"final_answer":"Done"}\n```</channel:decision>'));
    const kinds = seen.map((e) => (e.kind === 'attribute' ? `attribute:${e.key}` : e.kind));
    assert.deepEqual(
      kinds.filter((k) => k !== 'delta' && k !== 'attribute-delta'),
      ['open', 'attribute:action', 'attribute:final_answer', 'complete'],
    );
    assert.deepEqual(p.results().decision!.obj, { action: 'complete', final_answer: 'Done' });
  });

  it('deltas still go to the channel marker; attributes to canvas', () => {
    const p = new ChannelStreamParser(SPECS);
    const events = [...p.push('<channel:decision>{"a":1}</channel:decision>'), ...p.end()];
    const markers = new Set(events.flatMap((e) => ('marker' in e ? [`${e.kind}:${e.marker}`] : [])));
    assert.deepEqual([...markers].sort(), ['attribute:canvas', 'delta:decision']);
  });

  it('each instance gets its own composite streamer', () => {
    const p = new ChannelStreamParser(SPECS);
    const events = [...p.push('<channel:decision>{"a":1}</channel:decision><channel:decision>{"a":2,"b":'), ...p.end()];
    const attrs = events.flatMap((e) =>
      e.kind === 'attribute' ? [`${e.instance}:${e.key}=${JSON.stringify(e.value)}`] : [],
    );
    assert.deepEqual(attrs, ['0:a=1', '1:a=2']);
  });

  it('non-composite json channels emit no attributes', () => {
    const p = new ChannelStreamParser([{ name: 'decision', format: 'json' }]);
    const events = [...p.push('<channel:decision>{"a":1}</channel:decision>'), ...p.end()];
    assert.ok(!events.some((e) => e.kind === 'attribute' || e.kind === 'attribute-delta'));
  });
});

describe('json helpers', () => {
  const fences: Array<[string, string]> = [
    ['{"a":1}', '{"a":1}'],
    ['  ```json\n{"a":1}\n```  ', '{"a":1}'],
    ['```\n{"a":1}\n```', '{"a":1}'],
    ['```json {"a":1} ```', '{"a":1}'],
    ['```json\n{"a":1}', '{"a":1}'],
    ['````json\n{"a":"```"}\n````', '{"a":"```"}'],
  ];
  for (const [input, want] of fences)
    it(`stripFence ${JSON.stringify(input)}`, () => assert.equal(stripFence(input), want));

  it('parseJsonLenient', () => {
    assert.deepEqual(parseJsonLenient('{"a":1}'), { ok: true, value: { a: 1 } });
    assert.deepEqual(parseJsonLenient('{"a":"x\ny"}'), { ok: true, value: { a: 'x\ny' } });
    assert.deepEqual(parseJsonLenient('{"a":1} extra'), { ok: true, value: { a: 1 } });
    assert.deepEqual(parseJsonLenient('   '), { ok: false, error: 'empty JSON body' });
    const bad = parseJsonLenient('{"a":');
    assert.equal(bad.ok, false);
    assert.match((bad as { error: string }).error, /^invalid JSON: /);
  });
});
